//! --redirect: the hops of a chain at origins other than the run's, each over HTTP/1.1 on a
//! connection of its own to that origin (a few kept for the next chain), until the chain comes
//! back to the run's origin or ends. Off the static path: a boxed future per leg away, and a
//! read space of its own, made when a slot's chain first leaves. Must not touch the slot's own
//! connection (the protocol's) or account for the attempt (the loop does).

use std::cell::Cell;
use std::rc::Rc;

use crate::clock::Tick;
use crate::engine::slots::attempt::MAX_RETRIES;
use crate::engine::slots::shared::{Admitted, Connected, OpenConn, Shared};
use crate::engine::slots::slot::Slot;
use crate::engine::workloads::follow::{Led, next_hop};
use crate::engine::workloads::hops::{Dest, Hop};
use crate::proto::h1::ReadSpace;
use crate::proto::h1::slow_lane::{self, Reached};
use crate::proto::{Cause, Fail, Response};
use crate::redirect;
use crate::stats::Failure;

/// The read buffer of a slot's connections to other origins: small, since each following slot
/// has its own.
const READ_BYTES: usize = 8 * 1024;

/// Connections to other origins a slot keeps open for the next chain.
const MAX_SIDE: usize = 4;

/// An open connection and the responses it carried, counted when it closes, whatever closes it.
struct Open {
    conn: OpenConn,
    served: u64,
    ctx: Rc<Shared>,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.ctx.rec.closed(self.served, false);
    }
}

/// What a slot keeps for its hops away between chains.
pub struct Side {
    held: Vec<(Rc<Dest>, Open)>,
    space: ReadSpace,
    led: Led,
}

impl Side {
    pub fn new() -> Side {
        Side {
            held: Vec::new(),
            space: ReadSpace::new(READ_BYTES),
            led: Led::default(),
        }
    }

    fn take(&mut self, dest: &Rc<Dest>) -> Option<Open> {
        let i = self.held.iter().position(|(d, _)| Rc::ptr_eq(d, dest))?;
        Some(self.held.remove(i).1)
    }

    fn put(&mut self, dest: &Rc<Dest>, open: Open) {
        if self.held.len() == MAX_SIDE {
            self.held.remove(0);
        }
        self.held.push((dest.clone(), open));
    }
}

/// The exchange under way away, for the accounting of one that does not end: its request's
/// length while it is under way, and how far it got.
#[derive(Default)]
pub struct InFlight {
    pub len: Cell<Option<u64>>,
    pub written: Cell<Option<Tick>>,
    pub bytes_in: Cell<u64>,
}

/// How a leg away ended.
pub enum Back {
    /// A response that is not a redirect to follow: the attempt's answer.
    Answer(Response),
    /// A redirect back to the run's origin, `followed` redirects into the chain.
    Home { hop: Rc<Hop>, followed: u32 },
}

/// The chain of attempt `adm` from `hop` (away, `followed` redirects in), on slot `index`.
/// Each response's bytes are counted as it ends; the answer's with it, by the loop.
pub async fn leg(
    ctx: Rc<Shared>,
    index: usize,
    mut side: Box<Side>,
    mut hop: Rc<Hop>,
    mut followed: u32,
    adm: Admitted,
    in_flight: Rc<InFlight>,
) -> (Box<Side>, Result<Back, Fail>) {
    let back = chain(
        &ctx,
        index,
        &mut side,
        &mut hop,
        &mut followed,
        adm,
        &in_flight,
    )
    .await;
    (side, back)
}

async fn chain(
    ctx: &Rc<Shared>,
    index: usize,
    side: &mut Side,
    hop: &mut Rc<Hop>,
    followed: &mut u32,
    adm: Admitted,
    in_flight: &InFlight,
) -> Result<Back, Fail> {
    let slot = &ctx.slots[index];
    let recorded = !adm.warmup;
    let mut retries = adm.retries;
    loop {
        let (mut open, fresh) = match side.take(&hop.dest) {
            Some(open) => (open, false),
            None => {
                let conn = connect(ctx, slot, &hop.dest).await?;
                let open = Open {
                    conn,
                    served: 0,
                    ctx: ctx.clone(),
                };
                (open, true)
            }
        };
        let last = ctx.setup.rpc.is_some_and(|n| open.served + 1 >= n);
        let request: &[u8] = match last {
            true => &hop.listed.request_close,
            false => &hop.listed.request,
        };
        side.led.forget();
        in_flight.len.set(Some(request.len() as u64));
        let reached = Reached {
            written: &in_flight.written,
            bytes_in: &in_flight.bytes_in,
        };
        let outcome = slow_lane::exchange(
            &mut open.conn.conn,
            request,
            hop.listed.head_request,
            &mut side.space,
            reached,
            &mut side.led,
        )
        .await;
        let res = match outcome {
            Ok(res) => res,
            // A keep-alive close crossed the request: the same hop again, on a new connection.
            Err(f)
                if f.class == Failure::Closed
                    && !fresh
                    && reached.bytes_in.get() == 0
                    && hop.listed.retry_safe
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
            true => side.put(&hop.dest, open),
            false => drop(open),
        }
        let location = side.led.location();
        if !redirect::is_followed(res.status) || location.is_empty() {
            // The answer: its bytes are recorded with it.
            return Ok(Back::Answer(res));
        }
        if recorded {
            ctx.rec.bytes(0, res.bytes_in);
        }
        *hop = next_hop(ctx, hop, *followed, res.status, location, recorded)?;
        *followed += 1;
        if hop.dest.home {
            return Ok(Back::Home {
                hop: hop.clone(),
                followed: *followed,
            });
        }
    }
}

/// Opens a connection for a hop to `dest`, inside the attempt (a reconnect, timed as one).
async fn connect(ctx: &Shared, slot: &Slot, dest: &Dest) -> Result<OpenConn, Fail> {
    slot.begin_connect(Tick::now());
    let opened = match dest.via() {
        Ok(via) => Box::pin(ctx.open_via(via, true, slot)).await,
        Err(why) => {
            ctx.rec.connect_failed(|| why.clone());
            Err(Fail {
                class: Failure::Connect,
                cause: Cause::Message(why),
            })
        }
    };
    slot.end_connect();
    match opened? {
        Connected::H1(conn) => Ok(conn),
        // Connections to other origins offer only HTTP/1.1.
        Connected::H2(_) | Connected::H3(_) => Err(crate::engine::slots::drive::switched()),
    }
}
