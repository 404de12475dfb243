//! HOT: an HTTP/2 stream slot as a `Protocol`. The slots of one connection group (`-p` of them)
//! share its connection through a `Group`: as many run as the server allows; when the
//! connection takes no more streams (GOAWAY, an error, --rpc), the streams in flight finish, the
//! first slot to find it idle closes it, and one slot (the opener) opens the next inside its
//! next attempt while the others wait (those turns are the group's `Crew`'s). Attempts the
//! server refused unprocessed wait in the group and go first on the next connection. What a
//! stream's response says as it arrives goes to `E` (`()` on the static path: nothing; a `Watch`
//! per slot under --stream). Must not allocate per request or account for attempts.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::task::{Context, Poll};

use crate::clock::Tick;
use crate::engine::protocols::crew::Crew;
use crate::engine::protocols::protocol::{Again, Form, Outcome, Protocol, Ready, Sent};
use crate::engine::protocols::watch::{Observe, Streamed};
use crate::engine::slots::attempt::Ended;
use crate::engine::slots::shared::{Admitted, Connected, Listed, OpenH2, Shared};
use crate::engine::slots::slot::Slot;
use crate::proto::{Cause, Fail, Response, h2};

/// What the slots of one HTTP/2 connection group share: the connection, how many of them run
/// on it, and their `Crew`.
pub struct Group<E: Observe> {
    crew: Crew,
    /// The connection, while there is one.
    lane: RefCell<Option<h2::Lane<E>>>,
    /// Slots that run on the current connection: -p, or fewer if the server allows fewer.
    width: Cell<usize>,
}

impl<E: Observe> Group<E> {
    /// The group of connection `group`, pre-connected as `open`, whose streams tell their
    /// responses to an `E`.
    pub fn new(ctx: &Shared, group: usize, open: OpenH2) -> Rc<Group<E>> {
        let g = Group {
            crew: Crew::new(ctx, group),
            lane: RefCell::new(None),
            width: Cell::new(1),
        };
        g.install(ctx, open)
            .expect("the run's connections tell their responses to one kind of receiver");
        Rc::new(g)
    }

    pub fn base(&self) -> usize {
        self.crew.base()
    }

    /// Takes the new connection `open`; fails if its streams report to another kind of
    /// receiver (which the run never opens).
    fn install(&self, ctx: &Shared, open: OpenH2) -> Result<(), Fail> {
        let OpenH2 { lane, max_streams } = open;
        let lane = E::h2_lane(lane).ok_or_else(crate::engine::slots::drive::switched)?;
        ctx.rec.server_streams(max_streams);
        self.width
            .set(ctx.setup.streams.max(1).min(max_streams.max(1)));
        *self.lane.borrow_mut() = Some(lane);
        self.crew.nudge(ctx);
        Ok(())
    }

    /// Drops the current connection, if there is one; true if there was.
    fn drop_lane(&self) -> bool {
        self.lane.borrow_mut().take().is_some()
    }
}

/// Stream slot `k` of a group.
pub struct H2Lane<E: Observe> {
    group: Rc<Group<E>>,
    k: usize,
    /// The current attempt is on the group's connection (counted in its `busy`).
    on: bool,
    /// Its stream is open: the request was queued, the response not yet taken.
    open: bool,
    /// The current stream is a later one of its attempt (a redirect's hop).
    hop: bool,
    written: Option<Tick>,
}

impl<E: Observe> H2Lane<E> {
    pub fn new(group: Rc<Group<E>>, k: usize) -> H2Lane<E> {
        H2Lane {
            group,
            k,
            on: false,
            open: false,
            hop: false,
            written: None,
        }
    }

    /// Tells the slot's receiver that the attempt `adm` begins on the current connection.
    fn begin_watch(&self, adm: &Admitted) {
        if (E::WATCHES || E::HEADS || E::BEGINS)
            && let Some(lane) = self.group.lane.borrow().as_ref()
        {
            lane.events(self.k).begin(adm.start, !adm.warmup);
        }
    }

    /// Resets the stream if the attempt ended before its response.
    fn abandon(&mut self) {
        if std::mem::take(&mut self.open)
            && let Some(lane) = self.group.lane.borrow().as_ref()
        {
            lane.cancel(self.k);
        }
    }
}

impl<E: Observe + 'static> Protocol for H2Lane<E> {
    const STREAMS: bool = E::WATCHES;
    const FORM: Form = Form::H2;

    type Events = E;

    fn poll_ready(&mut self, ctx: &Shared, index: usize, cx: &mut Context<'_>) -> Poll<Ready> {
        if ctx.slots[index].poll_guard(cx).is_err() {
            return Poll::Ready(Ready::Over);
        }
        let g = &*self.group;
        let crew = &g.crew;
        loop {
            let lane = g.lane.borrow();
            match &*lane {
                Some(lane) if !crew.is_gone() => {
                    if self.k >= g.width.get() {
                        return crew.wait(ctx);
                    }
                    if crew.spent(ctx) {
                        crew.mark_gone(false);
                        continue;
                    }
                    // A server that allows no stream while none of ours is open frees no place:
                    // the attempt then waits for one inside, under its timeout, so that the wait
                    // shows as failures and a count run still ends.
                    let ready = match lane.starved() {
                        true => h2::Ready::Yes,
                        false => std::task::ready!(lane.poll_ready(cx)),
                    };
                    match ready {
                        h2::Ready::Gone { goaway } => crew.mark_gone(goaway),
                        _ => {
                            crew.board(&mut self.on);
                            return Poll::Ready(Ready::Go);
                        }
                    }
                }
                held => {
                    let held = held.is_some();
                    drop(lane);
                    return crew.turn(ctx, self.k, held, || {
                        g.drop_lane();
                    });
                }
            }
        }
    }

    fn retry(&mut self) -> Option<Admitted> {
        self.group.crew.retry()
    }

    fn begin(&mut self, _: &Shared, adm: &Admitted, _: Sent<'_>) -> bool {
        self.open = false;
        self.hop = false;
        self.written = None;
        if self.on {
            self.group.crew.admitted();
            self.begin_watch(adm);
        }
        self.on
    }

    fn adopt(&mut self, ctx: &Shared, opened: Connected, adm: &Admitted) -> Result<(), Fail> {
        let Connected::H2(open) = opened else {
            return Err(crate::engine::slots::drive::switched());
        };
        let g = &*self.group;
        g.install(ctx, open)?;
        g.crew.adopted(&mut self.on);
        self.begin_watch(adm);
        Ok(())
    }

    /// The stream's response was read in full; the connection is the group's.
    fn hop_ended(&mut self, _: &Shared, _: bool) {}

    /// A new stream on the connection the attempt holds a place on.
    fn hop_begin(&mut self, _: &Shared, adm: &Admitted, _: Sent<'_>) -> bool {
        self.open = false;
        self.hop = true;
        self.written = None;
        self.begin_watch(adm);
        self.on
    }

    fn poll_send(
        &mut self,
        ctx: &Shared,
        cx: &mut Context<'_>,
        req: Sent<'_>,
    ) -> Poll<Result<Response, Fail>> {
        let lane = self.group.lane.borrow();
        let Some(lane) = lane.as_ref() else {
            unreachable!("exchanging without a connection");
        };
        if !self.open {
            let other = match req {
                Sent::Own => None,
                Sent::Listed(l) => Some(&l.h2),
                Sent::Written(..) => unreachable!("HTTP/1.1's bytes on an HTTP/2 stream"),
            };
            if let Err(fail) = std::task::ready!(lane.poll_open(self.k, cx, other)) {
                return Poll::Ready(Err(match self.hop {
                    // The connection ended between two hops: the attempt goes again on the
                    // next, as one the server refused, since this hop was never sent.
                    true => Fail {
                        class: fail.class,
                        cause: Cause::Refused("the connection ended before this hop was sent"),
                    },
                    false => fail,
                }));
            }
            self.open = true;
            self.written = Some(Tick::now());
        }
        let r = std::task::ready!(lane.poll_response(self.k, cx));
        self.open = false;
        Poll::Ready(match r {
            // A gRPC call: what its status said.
            Ok(res) if E::JUDGES => lane.events(self.k).judged(ctx, res),
            r => r,
        })
    }

    /// Under --idle-timeout the slot learns of each read of its stream (the connection wakes it
    /// at each frame, `Events::WATCHES`).
    #[inline(always)]
    fn waiting(&self, slot: &Slot) {
        if E::WATCHES
            && let Some(lane) = self.group.lane.borrow().as_ref()
        {
            slot.read_at(lane.events(self.k).last_read());
        }
    }

    #[inline(always)]
    fn streamed(&mut self) -> Option<Streamed> {
        if !E::WATCHES {
            return None;
        }
        let lane = self.group.lane.borrow();
        lane.as_ref().and_then(|lane| lane.events(self.k).settle())
    }

    fn written(&self) -> Option<Tick> {
        self.written
    }

    /// Bytes are counted per connection, frames of all streams together.
    fn bytes_out(&self, _: &Shared, _: Sent<'_>) -> u64 {
        0
    }

    fn bytes_in(&self) -> u64 {
        0
    }

    /// Called first when an attempt ends: a stream still open is reset. One the server refused
    /// unprocessed (a graceful GOAWAY below its id) waits for the next connection.
    fn again(
        &mut self,
        ctx: &Shared,
        adm: Admitted,
        _: bool,
        outcome: &Outcome,
        _: Sent<'_>,
    ) -> Again {
        self.abandon();
        self.group.crew.again(ctx, &mut self.on, adm, outcome)
    }

    fn ended(&mut self, ctx: &Shared, ended: Ended) {
        self.group.crew.ended(ctx, &mut self.on, ended);
    }

    fn finish(&mut self, ctx: &Shared, index: usize) {
        self.abandon();
        let g = &*self.group;
        g.crew
            .leave(ctx, self.k, index, &mut self.on, || g.drop_lane());
    }

    fn retire(&mut self) {
        self.group.crew.mark_gone(false);
    }

    /// The stream goes on the slot's own side slot, after the group's `-p` call slots.
    fn listen(&mut self, ctx: &Shared, get: &Listed) -> Option<crate::mcp::legacy::Listening> {
        let side = {
            let lane = self.group.lane.borrow();
            lane.as_ref()?.side(ctx.setup.streams.max(1) + self.k)
        };
        let get = get.h2.clone();
        let (listening, reading) = crate::mcp::legacy::listen_with(move |tap| {
            let tapped = side.events().tap(tap);
            async move {
                if !tapped {
                    return Err(Fail {
                        class: crate::proto::Failure::Protocol,
                        cause: Cause::Other(
                            "a session stream on a connection without MCP's receiver",
                        ),
                    });
                }
                std::future::poll_fn(|cx| side.poll_open(cx, &get)).await?;
                std::future::poll_fn(|cx| side.poll_response(cx)).await
            }
        });
        ctx.tasks.spawn(reading);
        Some(listening)
    }

    fn with_events<R>(&mut self, f: impl FnOnce(&mut E) -> R) -> Option<R> {
        let lane = self.group.lane.borrow();
        lane.as_ref().map(|lane| f(&mut lane.events(self.k)))
    }

    fn peek_events<R>(&self, f: impl FnOnce(&E) -> R) -> Option<R> {
        let lane = self.group.lane.borrow();
        lane.as_ref().map(|lane| f(&lane.events(self.k)))
    }
}
