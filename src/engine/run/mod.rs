//! A run from its plan to its merged numbers: the load threads and their start and end. Must
//! not run per request.
//!
//! - `armed`: `prepare` (resolve, start the threads, wait until their connections are open);
//!   `go`: `Armed::go` (start the clock, run, merge).
//! - `thread`: one load thread: its runtime, its pre-connect, its wait for the start, its run.
//! - `start`: `--start-at`'s wait between connected and go, and a late start's refusal.
//! - `requests`: a plan's requests built into a thread's `Setup`, once.
//! - `control`: what the outside world shares with a running engine (the stop flag, the live
//!   views).
//! - `limits`: the open-file limit, raised at start and checked against the plan.
//! - `staffing`: the closed model under --stages of connections: a thread's connections
//!   opened and ended as the profile's level moves.
//! - `split`: exact division of connections and budgets over threads.
//! - `cpu`, `rates`: a thread's CPU time, and wrk's Req/Sec samples.

pub(super) mod armed;
pub(super) mod control;
pub(super) mod cpu;
pub(super) mod go;
pub(super) mod limits;
pub(super) mod rates;
pub(in crate::engine) mod requests;
pub(super) mod split;
pub(super) mod staffing;
pub(super) mod start;
pub(super) mod thread;
