//! An HTTP/3 stream slot as a `Protocol`. The slots of one connection group (`-p` of them) share
//! its QUIC connection through a `Group`: each exchange is a request stream of its own; when the
//! connection takes no more requests (GOAWAY, its end, --rpc), the exchanges in flight finish,
//! the first slot to find it idle closes it, and one slot (the opener) opens the next inside its
//! next attempt while the others wait (those turns are the group's `Crew`'s, as over HTTP/2).
//! Attempts the server turned away unprocessed wait in the group and go first on the next
//! connection. Off the static path: each exchange is a boxed
//! future over h3. Must not account for attempts.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use crate::clock::Tick;
use crate::engine::protocols::crew::Crew;
use crate::engine::protocols::protocol::{Again, Form, Outcome, Protocol, Ready, Sent};
use crate::engine::protocols::watch::Observe;
use crate::engine::slots::attempt::Ended;
use crate::engine::slots::shared::{Admitted, Connected, Listed, OpenH3, Shared};
use crate::net::quic::H3_NO_ERROR;
use crate::proto::{Cause, Fail, Response, h3};

/// What the slots of one HTTP/3 connection group share: the connection and their `Crew`.
pub struct Group {
    crew: Crew,
    /// The connection, while there is one.
    conn: RefCell<Option<OpenH3>>,
}

impl Group {
    /// The group of connection `group`, pre-connected as `open`.
    pub fn new(ctx: &Shared, group: usize, open: OpenH3) -> Rc<Group> {
        Rc::new(Group {
            crew: Crew::new(ctx, group),
            conn: RefCell::new(Some(open)),
        })
    }

    pub fn base(&self) -> usize {
        self.crew.base()
    }

    /// Closes the current connection with H3_NO_ERROR and takes QUIC's figures of it, if there
    /// is one; true if there was.
    fn close(&self, ctx: &Shared) -> bool {
        let Some(open) = self.conn.borrow_mut().take() else {
            return false;
        };
        open.quic.close(quinn::VarInt::from_u32(H3_NO_ERROR), b"");
        let group = self.crew.base() / ctx.setup.streams.max(1);
        ctx.rec.quic_closed(group, &open.quic);
        true
    }
}

type Exchange = Pin<Box<dyn Future<Output = Result<Response, Fail>>>>;

/// Stream slot `k` of a group, whose responses are told to `E` (shared with the exchange's
/// future, which outlives no attempt).
pub struct H3Lane<E> {
    group: Rc<Group>,
    k: usize,
    /// The current attempt is on the group's connection (counted in its `busy`).
    on: bool,
    /// The current attempt's exchange, once it started.
    exchange: Option<Exchange>,
    written: Rc<Cell<Option<Tick>>>,
    events: Rc<RefCell<E>>,
}

impl<E> H3Lane<E> {
    pub fn new(group: Rc<Group>, k: usize, events: E) -> H3Lane<E> {
        H3Lane {
            group,
            k,
            on: false,
            exchange: None,
            written: Rc::new(Cell::new(None)),
            events: Rc::new(RefCell::new(events)),
        }
    }
}

impl<E: Observe + 'static> Protocol for H3Lane<E> {
    const FORM: Form = Form::H3;
    const STREAMS: bool = E::WATCHES;
    type Events = E;

    fn poll_ready(&mut self, ctx: &Shared, index: usize, cx: &mut Context<'_>) -> Poll<Ready> {
        if ctx.slots[index].poll_guard(cx).is_err() {
            return Poll::Ready(Ready::Over);
        }
        let g = &*self.group;
        let crew = &g.crew;
        loop {
            let conn = g.conn.borrow();
            match &*conn {
                Some(open) if !crew.is_gone() => {
                    if crew.spent(ctx) || open.quic.close_reason().is_some() {
                        crew.mark_gone(false);
                        continue;
                    }
                    crew.board(&mut self.on);
                    return Poll::Ready(Ready::Go);
                }
                held => {
                    let held = held.is_some();
                    drop(conn);
                    return crew.turn(ctx, self.k, held, || {
                        g.close(ctx);
                    });
                }
            }
        }
    }

    fn retry(&mut self) -> Option<Admitted> {
        self.group.crew.retry()
    }

    fn begin(&mut self, _: &Shared, adm: &Admitted, _: Sent<'_>) -> bool {
        self.exchange = None;
        self.written.set(None);
        self.events.borrow_mut().begin(adm.start, !adm.warmup);
        if self.on {
            self.group.crew.admitted();
        }
        self.on
    }

    fn adopt(&mut self, ctx: &Shared, opened: Connected, _: &Admitted) -> Result<(), Fail> {
        let Connected::H3(open) = opened else {
            return Err(crate::engine::slots::drive::switched_from(opened));
        };
        let g = &*self.group;
        *g.conn.borrow_mut() = Some(open);
        g.crew.adopted(&mut self.on);
        g.crew.nudge(ctx);
        Ok(())
    }

    /// The exchange's response was read in full; the connection is the group's.
    fn hop_ended(&mut self, _: &Shared, _: bool) {}

    /// A new request stream on the connection the attempt holds a place on.
    fn hop_begin(&mut self, _: &Shared, adm: &Admitted, _: Sent<'_>) -> bool {
        self.exchange = None;
        self.written.set(None);
        self.events.borrow_mut().begin(adm.start, !adm.warmup);
        self.on
    }

    fn poll_send(
        &mut self,
        ctx: &Shared,
        cx: &mut Context<'_>,
        req: Sent<'_>,
    ) -> Poll<Result<Response, Fail>> {
        let exchange = self.exchange.get_or_insert_with(|| {
            let conn = self.group.conn.borrow();
            let Some(open) = conn.as_ref() else {
                unreachable!("exchanging without a connection");
            };
            let Some(h3) = &ctx.setup.h3 else {
                unreachable!("an HTTP/3 lane in a run without an HTTP/3 request");
            };
            let request = match req {
                Sent::Own => h3.request.clone(),
                Sent::Written(..) => unreachable!("HTTP/1.1's bytes on an HTTP/3 stream"),
                Sent::Listed(l) => match &l.h3 {
                    Some(r) => r.clone(),
                    None => unreachable!("a list's request without its HTTP/3 form"),
                },
            };
            Box::pin(h3::exchange(
                open.send.clone(),
                open.quic.clone(),
                request,
                self.written.clone(),
                self.events.clone(),
            ))
        });
        let r = std::task::ready!(exchange.as_mut().poll(cx));
        self.exchange = None;
        Poll::Ready(r)
    }

    /// Under --idle-timeout the slot learns of each read of its stream.
    fn waiting(&self, slot: &crate::engine::slots::slot::Slot) {
        if E::WATCHES {
            slot.read_at(self.events.borrow().last_read());
        }
    }

    fn streamed(&mut self) -> Option<crate::engine::protocols::watch::Streamed> {
        match E::WATCHES {
            true => self.events.borrow_mut().settle(),
            false => None,
        }
    }

    fn written(&self) -> Option<Tick> {
        self.written.get()
    }

    /// Bytes are counted per connection, by QUIC.
    fn bytes_out(&self, _: &Shared, _: Sent<'_>) -> u64 {
        0
    }

    fn bytes_in(&self) -> u64 {
        0
    }

    /// Called first when an attempt ends: an exchange still under way is dropped, which resets
    /// its stream. One the server turned away unprocessed waits for the next connection; a
    /// GOAWAY also ends the connection for new requests.
    fn again(
        &mut self,
        ctx: &Shared,
        adm: Admitted,
        _: bool,
        outcome: &Outcome,
        _: Sent<'_>,
    ) -> Again {
        self.exchange = None;
        if let Ok(Err(f)) = outcome
            && matches!(f.cause, Cause::Refused(m) if m == h3::GOING_AWAY)
        {
            self.group.crew.mark_gone(true);
        }
        self.group.crew.again(ctx, &mut self.on, adm, outcome)
    }

    fn ended(&mut self, ctx: &Shared, ended: Ended) {
        self.group.crew.ended(ctx, &mut self.on, ended);
    }

    fn finish(&mut self, ctx: &Shared, index: usize) {
        self.exchange = None;
        let g = &*self.group;
        g.crew
            .leave(ctx, self.k, index, &mut self.on, || g.close(ctx));
    }

    fn retire(&mut self) {
        self.group.crew.mark_gone(false);
    }

    fn listen(&mut self, ctx: &Shared, get: &Listed) -> Option<crate::mcp::legacy::Listening> {
        let (send, quic) = {
            let conn = self.group.conn.borrow();
            let open = conn.as_ref()?;
            (open.send.clone(), open.quic.clone())
        };
        let get = get.h3.clone()?;
        let (listening, reading) = crate::mcp::legacy::listen_with(move |tap| {
            let tap = Rc::new(RefCell::new(tap));
            h3::exchange(send, quic, get, Rc::new(Cell::new(None)), tap)
        });
        ctx.tasks.spawn(reading);
        Some(listening)
    }

    fn with_events<R>(&mut self, f: impl FnOnce(&mut E) -> R) -> Option<R> {
        Some(f(&mut self.events.borrow_mut()))
    }

    fn peek_events<R>(&self, f: impl FnOnce(&E) -> R) -> Option<R> {
        Some(f(&self.events.borrow()))
    }
}
