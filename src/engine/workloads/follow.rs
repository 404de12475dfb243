//! --redirect: the life of an HTTP/1.1 connection that follows redirects. Each attempt is a
//! chain: the run's request, then the request each redirect asks for, on this connection while
//! the chain stays on the run's origin and on connections of its own to other origins. The
//! attempt's latency covers the whole chain; its status is the last response's. Off the static
//! path by design: a boxed future per connection, and a read space of its own so that a
//! response's Location is kept until it is read (the thread's shared one is read by every
//! connection in turn). Nothing is built per request that `Hops` already holds.

use std::cell::Cell;
use std::pin::pin;
use std::rc::Rc;

use crate::clock::Tick;
use crate::engine::slots::attempt::{BackOff, Ended, MAX_RETRIES, Marks, attempt, back_off};
use crate::engine::slots::record::Record;
use crate::engine::slots::shared::{Admitted, Connected, OpenConn, Shared};
use crate::engine::slots::slot::Slot;
use crate::engine::workloads::hops::{Dest, Hop};
use crate::proto::h1::ReadSpace;
use crate::proto::h1::slow_lane::{self, Reached};
use crate::proto::{Cause, Fail, Response};
use crate::redirect;
use crate::stats::Failure;

/// The read buffer of one following connection: small, since every connection has its own.
const READ_BYTES: usize = 8 * 1024;

/// Connections to other origins a connection keeps open for the next chain.
const MAX_SIDE: usize = 4;

/// An open connection and the responses it carried, counted when it closes, whatever closes it
/// (a cancelled attempt drops it too).
struct Open<'a> {
    conn: OpenConn,
    served: u64,
    rec: &'a Record,
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        self.rec.closed(self.served, false);
    }
}

/// The connections one following connection holds between requests: its own (to the run's
/// origin) and a few to origins redirects led to.
struct Held<'a> {
    home: Option<Open<'a>>,
    side: Vec<(Rc<Dest>, Open<'a>)>,
}

impl<'a> Held<'a> {
    fn take(&mut self, dest: &Rc<Dest>) -> Option<Open<'a>> {
        if dest.home {
            return self.home.take();
        }
        let i = self.side.iter().position(|(d, _)| Rc::ptr_eq(d, dest))?;
        Some(self.side.remove(i).1)
    }

    fn put(&mut self, dest: &Rc<Dest>, open: Open<'a>) {
        if dest.home {
            self.home = Some(open);
            return;
        }
        if self.side.len() == MAX_SIDE {
            self.side.remove(0);
        }
        self.side.push((dest.clone(), open));
    }
}

/// The exchange under way, for the accounting of one that did not end: its request's length,
/// and how far it got (the first hop's written time is the attempt's own mark).
#[derive(Default)]
struct InFlight {
    len: Cell<Option<u64>>,
    first: Cell<bool>,
    written: Cell<Option<Tick>>,
    bytes_in: Cell<u64>,
}

/// Drives connection slot `index` (pre-connected as `first`) until the thread stops admitting
/// attempts.
pub async fn run(ctx: Rc<Shared>, index: usize, first: OpenConn) {
    let ctx = &*ctx;
    let slot = &ctx.slots[index];
    let mut held = Held {
        home: Some(Open {
            conn: first,
            served: 0,
            rec: &ctx.rec,
        }),
        side: Vec::new(),
    };
    let mut space = ReadSpace::capturing(READ_BYTES);
    let mut delay = BackOff::default();
    while let Some(adm) = ctx.next_attempt(index).await {
        let marks = Marks::default();
        let in_flight = InFlight::default();
        let ended = {
            let chain = pin!(chain(
                ctx, slot, &mut held, &mut space, &marks, &in_flight, adm,
            ));
            attempt(ctx, slot, adm, &marks, chain).await
        };
        // An exchange that did not end (failed or cancelled) still sent and received bytes.
        if let Some(len) = in_flight.len.get()
            && !adm.warmup
        {
            let written = match in_flight.first.get() {
                true => &marks.written,
                false => &in_flight.written,
            };
            let out = if written.get().is_some() { len } else { 0 };
            ctx.rec.bytes(out, in_flight.bytes_in.get());
        }
        match ended {
            Ended::Completed { .. } => delay = BackOff::default(),
            Ended::Failed(class) => {
                // A new connection that the server closed before answering is a failed
                // connect: wait before the next, as for a refused one.
                let class = match class {
                    Failure::Closed if marks.connected.get().is_some() => Failure::Connect,
                    c => c,
                };
                if !back_off(ctx, index, class, &mut delay).await {
                    break;
                }
            }
            Ended::Interrupted => break,
        }
    }
    drop(held);
    slot.retire();
}

/// One attempt: the run's request, then each redirect's, up to the limit.
#[allow(clippy::too_many_arguments)]
async fn chain<'a>(
    ctx: &'a Shared,
    slot: &Slot,
    held: &mut Held<'a>,
    space: &mut ReadSpace,
    marks: &Marks,
    in_flight: &InFlight,
    adm: Admitted,
) -> Result<Response, Fail> {
    let Some(hops) = &ctx.hops else {
        unreachable!("a following connection in a run that does not follow");
    };
    let mut hop: Rc<Hop> = hops.borrow().first.clone();
    let mut followed = 0;
    let mut retries = adm.retries;
    let recorded = !adm.warmup;
    loop {
        let first_hop = followed == 0;
        let (mut open, fresh) = match held.take(&hop.dest) {
            Some(open) => (open, false),
            None => {
                let conn = connect(ctx, slot, &hop.dest).await?;
                if first_hop {
                    marks.connected.set(Some(Tick::now()));
                }
                let open = Open {
                    conn,
                    served: 0,
                    rec: &ctx.rec,
                };
                (open, true)
            }
        };
        let last = ctx.setup.rpc.is_some_and(|n| open.served + 1 >= n);
        let request: &[u8] = match last {
            true => &hop.request_close,
            false => &hop.request,
        };
        space.heads.forget_location();
        in_flight.len.set(Some(request.len() as u64));
        in_flight.first.set(first_hop);
        let reached = Reached {
            written: match first_hop {
                true => &marks.written,
                false => &in_flight.written,
            },
            bytes_in: &in_flight.bytes_in,
        };
        let outcome = slow_lane::exchange(
            &mut open.conn.conn,
            request,
            hop.head_request,
            space,
            reached,
            &mut (),
        )
        .await;
        let res = match outcome {
            Ok(res) => res,
            // A keep-alive close crossed the request: the same hop again, on a new connection.
            Err(f)
                if f.class == Failure::Closed
                    && !fresh
                    && reached.bytes_in.get() == 0
                    && hop.retry_safe
                    && retries < MAX_RETRIES =>
            {
                retries += 1;
                in_flight.len.set(None);
                if recorded {
                    let out = match reached.written.get() {
                        Some(_) => request.len() as u64,
                        None => 0,
                    };
                    ctx.rec.retried(out);
                }
                reached.written.set(None);
                continue;
            }
            Err(f) => return Err(f),
        };
        in_flight.len.set(None);
        open.served += 1;
        if recorded {
            ctx.rec.bytes(request.len() as u64, 0);
        }
        match res.keep_alive && !last {
            true => held.put(&hop.dest, open),
            false => drop(open),
        }
        let location = match space.heads.location() {
            Some(l) if redirect::is_followed(res.status) => l,
            // The answer: its bytes are recorded with it.
            _ => return Ok(res),
        };
        if recorded {
            ctx.rec.bytes(0, res.bytes_in);
        }
        if followed == hops.borrow().limit() {
            return Err(Fail {
                class: Failure::Redirect,
                cause: Cause::Other(
                    "still a redirect after as many as --redirect allows (a loop, or a longer chain)",
                ),
            });
        }
        let next = hops.borrow_mut().next(&hop, res.status, location);
        hop = next.map_err(|e| Fail {
            class: Failure::Redirect,
            cause: Cause::Message(e.to_string()),
        })?;
        followed += 1;
        if recorded {
            ctx.rec.redirected();
        }
    }
}

/// Opens a connection for a hop to `dest`, inside the attempt (a reconnect, timed as one).
async fn connect(ctx: &Shared, slot: &Slot, dest: &Dest) -> Result<OpenConn, Fail> {
    slot.begin_connect(Tick::now());
    let opened = match dest.home {
        true => Box::pin(ctx.open(true, slot)).await,
        false => match dest.via() {
            Ok(via) => Box::pin(ctx.open_via(via, true, slot)).await,
            Err(why) => {
                ctx.rec.connect_failed(|| why.clone());
                Err(Fail {
                    class: Failure::Connect,
                    cause: Cause::Message(why),
                })
            }
        },
    };
    slot.end_connect();
    match opened? {
        Connected::H1(conn) => Ok(conn),
        // Following connections offer only HTTP/1.1.
        Connected::H2(_) | Connected::H3(_) => Err(crate::engine::slots::drive::switched()),
    }
}
