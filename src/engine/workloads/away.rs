//! --redirect: the hops of a chain at origins other than the run's, each on a connection of its
//! own to that origin (a few kept for the next chain): HTTP/2 where the run speaks it and the
//! origin agrees (one stream at a time), HTTP/1.1 otherwise; until the chain comes back to the
//! run's origin or ends. Off the static path: a boxed future per leg away, and a read space of
//! its own, made when a slot's chain first leaves. Must not touch the slot's own connection
//! (the protocol's) or account for the attempt (the loop does).

use std::cell::Cell;
use std::rc::Rc;

use crate::clock::Tick;
use crate::engine::slots::attempt::MAX_RETRIES;
use crate::engine::slots::shared::{Admitted, Connected, H2Handle, OpenConn, Shared};
use crate::engine::slots::slot::Slot;
use crate::engine::workloads::follow::{Led, next_hop};
use crate::engine::workloads::hops::{Dest, Hop};
use crate::proto::h1::ReadSpace;
use crate::proto::h1::slow_lane::{self, Reached};
use crate::proto::{Cause, Fail, Response, h2};
use crate::redirect;
use crate::stats::Failure;

/// The read buffer of a slot's connections to other origins: small, since each following slot
/// has its own.
const READ_BYTES: usize = 8 * 1024;

/// Connections to other origins a slot keeps open for the next chain.
const MAX_SIDE: usize = 4;

/// An open connection and the responses it carried, counted when it closes, whatever closes it.
struct Open {
    conn: Away,
    served: u64,
    ctx: Rc<Shared>,
}

/// A connection to another origin, in the protocol it agreed to.
enum Away {
    H1(OpenConn),
    /// Its hops go one at a time on stream slot 0; the connection counts its own bytes.
    H2(h2::Lane<Led>),
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
        let reached = Reached {
            written: &in_flight.written,
            bytes_in: &in_flight.bytes_in,
        };
        let h1 = matches!(open.conn, Away::H1(_));
        let outcome = match &mut open.conn {
            Away::H1(c) => {
                in_flight.len.set(Some(request.len() as u64));
                slow_lane::exchange(
                    &mut c.conn,
                    request,
                    hop.listed.head_request,
                    &mut side.space,
                    reached,
                    &mut side.led,
                )
                .await
            }
            Away::H2(lane) => {
                let r = h2_exchange(lane, &hop.listed.h2, &in_flight.written).await;
                // Its Location, where the HTTP/1.1 exchange leaves it.
                std::mem::swap(&mut side.led, &mut lane.events(0));
                r
            }
        };
        let res = match outcome {
            Ok(res) => res,
            // A keep-alive close crossed the request, or the server refused it unprocessed (a
            // GOAWAY, REFUSED_STREAM): the same hop again, on a new connection.
            Err(f)
                if !fresh
                    && retries < MAX_RETRIES
                    && (matches!(f.cause, Cause::Refused(_))
                        || (f.class == Failure::Closed
                            && reached.bytes_in.get() == 0
                            && hop.listed.retry_safe)) =>
            {
                retries += 1;
                in_flight.len.set(None);
                if recorded && h1 {
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
        if recorded && h1 {
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
        if recorded && h1 {
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

/// One hop on stream slot 0 of an HTTP/2 connection to another origin: `written` once its
/// request was handed over.
async fn h2_exchange(
    lane: &h2::Lane<Led>,
    request: &h2::Other,
    written: &Cell<Option<Tick>>,
) -> Result<Response, Fail> {
    /// A hop abandoned with its stream open (a timeout, the end of the run) cancels it, so
    /// that the connection, once dropped, does not wait for it.
    struct Abandoned<'a>(&'a h2::Lane<Led>, bool);
    impl Drop for Abandoned<'_> {
        fn drop(&mut self) {
            if !self.1 {
                self.0.cancel(0);
            }
        }
    }
    lane.events(0).forget();
    let mut guard = Abandoned(lane, false);
    let res = async {
        std::future::poll_fn(|cx| lane.poll_open(0, cx, Some(request))).await?;
        written.set(Some(Tick::now()));
        std::future::poll_fn(|cx| lane.poll_response(0, cx)).await
    }
    .await;
    guard.1 = true;
    res
}

/// Opens a connection for a hop to `dest`, inside the attempt (a reconnect, timed as one).
async fn connect(ctx: &Shared, slot: &Slot, dest: &Dest) -> Result<Away, Fail> {
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
        Connected::H1(conn) => Ok(Away::H1(conn)),
        Connected::H2(open) => match open.lane {
            H2Handle::Followed(lane) => Ok(Away::H2(lane)),
            _ => Err(crate::engine::slots::drive::switched()),
        },
        // Connections to other origins go over TCP.
        Connected::H3(_) => Err(crate::engine::slots::drive::switched()),
    }
}
