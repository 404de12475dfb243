//! `-v`'s look at the request a script's `request()` makes first: a state of the script's own
//! (its body and `init` run, `setup` does not, and what they print is dropped), offered the
//! run's request as `wrk.request()` makes it, asked once. On a thread of its own, stopped as a
//! load thread's Lua is when it does not return in time. Not part of the run: the run's states
//! are made afresh, so the first request a load thread sends is the one shown.

use std::sync::{Arc, mpsc};
use std::time::Duration;

use super::worker::{Made, Seed, Worker};
use super::{Echo, Loaded, Script, Sink};
use crate::plan::Plan;

/// How often a Lua that did not return is asked again to stop (it may have been in a C call
/// when asked), and how many times before it is left behind.
const ASK_EVERY: Duration = Duration::from_millis(100);
const ASKS: u32 = 20;

/// The first request `request()` of `loaded` makes for `plan` (the run's plan), its bytes as
/// the run would send them; or why there is none. `limit`: how long the script may take.
pub fn first_request(plan: &Plan, loaded: &Loaded, limit: Duration) -> Result<Vec<u8>, String> {
    let script: Arc<Script> = loaded.0.clone();
    let plan = plan.clone();
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::Builder::new()
        .name("spate-look".into())
        .spawn(move || {
            let _ = tx.send(make(&script, &plan));
        })
        .map_err(|e| format!("cannot start a thread: {e}"))?;
    let mut wait = limit;
    for _ in 0..=ASKS {
        match rx.recv_timeout(wait) {
            Ok(r) => {
                let _ = handle.join();
                return r;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err("the script's state ended without an answer".into());
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                use std::os::unix::thread::JoinHandleExt as _;
                super::interrupt::interrupt(handle.as_pthread_t());
                wait = ASK_EVERY;
            }
        }
    }
    Err(format!(
        "the script did not make its first request within {limit:?}"
    ))
}

fn make(script: &Script, plan: &Plan) -> Result<Vec<u8>, String> {
    super::interrupt::install();
    let quiet = Echo::new(Sink::Held);
    let worker = Worker::with_echo(script, &Seed::default(), None, &quiet)?;
    let mut shaped = plan.clone();
    worker.shaped.apply(&mut shaped);
    worker.offer(&crate::request::h1_bytes(&shaped))?;
    let mut made = Made::default();
    if !worker.request(&mut made) {
        if super::interrupt::interrupted() {
            return Err("request() did not return in time and was stopped".into());
        }
        return Err(worker
            .take_error()
            .unwrap_or_else(|| "request() made no request".into()));
    }
    Ok(made.batch.first(1).to_vec())
}
