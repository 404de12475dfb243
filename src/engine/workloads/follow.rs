//! --redirect as a workload over any `Protocol`: an attempt is a chain, the run's request, then
//! the request each redirect asks for. Hops to the run's origin go on the slot's own connection
//! (an HTTP/1.1 connection, or a new stream on the HTTP/2 or HTTP/3 connection the slot holds a
//! place on); hops to other origins go on connections of their own (`away`: HTTP/2 where the
//! run speaks it and the origin agrees by ALPN, HTTP/1.1 otherwise). The
//! attempt's latency covers the whole chain, its status is the last response's, and the loop
//! accounts for it once. The Location of each response reaches the workload through `Led`,
//! the receiver of the slot's responses. Off the static path (boxed); nothing is built per
//! request that `Hops` already holds.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, ready};

use crate::clock::Tick;
use crate::engine::protocols::protocol::{Again, Outcome, Protocol, Sent};
use crate::engine::protocols::watch::Observe;
use crate::engine::slots::shared::{Admitted, Connected, H2Handle, Shared};
use crate::engine::workloads::away::{self, Back, InFlight, Side};
use crate::engine::workloads::hops::Hop;
use crate::engine::workloads::workload::Workload;
use crate::proto::{Cause, Events, Fail, Response, h2};
use crate::redirect;
use crate::stats::Failure;

/// What a following slot's responses are told to: the Location of the last final head, if it
/// had one. Bounded by the head, which the protocol's parser bounds.
#[derive(Debug, Default)]
pub struct Led {
    location: Vec<u8>,
}

impl Led {
    /// The Location of the last final head since `forget`, empty if it had none.
    pub fn location(&self) -> &[u8] {
        &self.location
    }

    pub fn forget(&mut self) {
        self.location.clear();
    }
}

impl Events for Led {
    const HEADS: bool = true;

    fn head_bytes(&mut self, head: &[u8]) {
        self.location.clear();
        if let Some(value) = crate::proto::h1::location(head) {
            self.location.extend_from_slice(value);
        }
    }
}

impl Observe for Led {
    fn begin(&mut self, _start: Tick, _recorded: bool) {
        self.forget();
    }

    fn h2_lane(h: H2Handle) -> Option<h2::Lane<Led>> {
        match h {
            H2Handle::Followed(lane) => Some(lane),
            _ => None,
        }
    }
}

type Opening = Pin<Box<dyn Future<Output = Result<Connected, Fail>>>>;
type Leaving = Pin<Box<dyn Future<Output = (Box<Side>, Result<Back, Fail>)>>>;

/// Where the current hop is under way.
enum Leg {
    /// On the protocol's connection.
    Home,
    /// The slot's HTTP/1.1 connection closed after a hop: a new one opens for the next.
    Opening(Opening),
    /// At other origins, until the chain comes back or ends.
    Away(Leaving),
}

/// A following slot's attempts.
pub struct FollowWork {
    ctx: Rc<Shared>,
    index: usize,
    adm: Admitted,
    hop: Rc<Hop>,
    /// Redirects followed so far in the current chain.
    followed: u32,
    leg: Leg,
    /// The connections to other origins and their read space, made when a chain first leaves.
    side: Option<Box<Side>>,
    /// The exchange under way away, for the bytes of one that does not end.
    in_flight: Rc<InFlight>,
    /// When the chain's first request had been written.
    first_written: Option<Tick>,
    /// The current hop's connection was opened for it.
    fresh: bool,
    /// What the protocol carried for the current hop is counted already (or it went away).
    counted: bool,
    /// A keep-alive close crossed the current hop: that hop goes again, not the chain.
    resume: bool,
    location: Vec<u8>,
}

impl FollowWork {
    /// Slot `index`'s following.
    pub fn new(ctx: Rc<Shared>, index: usize) -> FollowWork {
        let hop = hops(&ctx).borrow().first.clone();
        FollowWork {
            ctx,
            index,
            adm: Admitted {
                start: Tick::now(),
                intended: None,
                warmup: false,
                retries: 0,
                entry: 0,
            },
            hop,
            followed: 0,
            leg: Leg::Home,
            side: None,
            in_flight: Rc::default(),
            first_written: None,
            fresh: false,
            counted: false,
            resume: false,
            location: Vec::new(),
        }
    }

    /// The chain goes on with `self.hop`: on the slot's connection or away.
    fn go_on<P: Protocol>(&mut self, p: &mut P, ctx: &Shared) {
        if self.hop.dest.home {
            self.counted = false;
            self.fresh = false;
            if p.hop_begin(ctx, &self.adm, Sent::Listed(&self.hop.listed)) {
                self.leg = Leg::Home;
                return;
            }
            let slot = &ctx.slots[self.index];
            slot.begin_connect(Tick::now());
            let (own, index) = (self.ctx.clone(), self.index);
            self.leg = Leg::Opening(Box::pin(
                async move { own.open(true, &own.slots[index]).await },
            ));
            return;
        }
        self.counted = true;
        let side = self.side.take().unwrap_or_else(|| Box::new(Side::new()));
        self.leg = Leg::Away(Box::pin(away::leg(
            self.ctx.clone(),
            self.index,
            side,
            self.hop.clone(),
            self.followed,
            self.adm,
            self.in_flight.clone(),
        )));
    }
}

/// The thread's hops, in a run that follows.
fn hops(ctx: &Shared) -> &std::cell::RefCell<crate::engine::workloads::hops::Hops> {
    match &ctx.hops {
        Some(h) => h,
        None => unreachable!("a following slot in a run that does not follow"),
    }
}

/// The hop a redirect of `status` to `location` leads to from `from`, the chain having
/// followed `followed` already: a failure of class `redirect` past the limit or for a Location
/// that leads nowhere spate goes.
pub(super) fn next_hop(
    ctx: &Shared,
    from: &Hop,
    followed: u32,
    status: u16,
    location: &[u8],
    recorded: bool,
) -> Result<Rc<Hop>, Fail> {
    let hops = hops(ctx);
    if followed == hops.borrow().limit() {
        return Err(Fail {
            class: Failure::Redirect,
            cause: Cause::Other(
                "still a redirect after as many as --redirect allows (a loop, or a longer chain)",
            ),
        });
    }
    let next = hops.borrow_mut().next(from, status, location);
    let next = next.map_err(|e| Fail {
        class: Failure::Redirect,
        cause: Cause::Message(e.to_string()),
    })?;
    if recorded {
        ctx.rec.redirected();
    }
    Ok(next)
}

impl<P: Protocol<Events = Led>> Workload<P> for FollowWork {
    fn begin(&mut self, p: &mut P, ctx: &Shared, adm: &Admitted) -> bool {
        self.adm = *adm;
        if !std::mem::take(&mut self.resume) {
            self.hop = hops(ctx).borrow().first.clone();
            self.followed = 0;
            self.first_written = None;
        }
        self.leg = Leg::Home;
        self.fresh = false;
        self.counted = false;
        p.begin(ctx, adm, Sent::Listed(&self.hop.listed))
    }

    fn adopt(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        opened: Connected,
        adm: &Admitted,
    ) -> Result<(), Fail> {
        self.fresh = true;
        p.adopt(ctx, opened, adm)
    }

    fn poll_exchange(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Response, Fail>> {
        loop {
            match &mut self.leg {
                Leg::Home => {
                    let res = ready!(p.poll_send(ctx, cx, Sent::Listed(&self.hop.listed)))?;
                    if !redirect::is_followed(res.status) {
                        return Poll::Ready(Ok(res));
                    }
                    let mut location = std::mem::take(&mut self.location);
                    location.clear();
                    p.peek_events(|led| location.extend_from_slice(led.location()));
                    self.location = location;
                    if self.location.is_empty() {
                        return Poll::Ready(Ok(res));
                    }
                    if self.followed == 0 {
                        self.first_written = p.written();
                    }
                    let recorded = !self.adm.warmup;
                    if recorded {
                        let out = p.bytes_out(ctx, Sent::Listed(&self.hop.listed));
                        ctx.rec.bytes(out, res.bytes_in);
                    }
                    self.counted = true;
                    p.hop_ended(ctx, res.keep_alive);
                    let (status, followed) = (res.status, self.followed);
                    self.hop =
                        next_hop(ctx, &self.hop, followed, status, &self.location, recorded)?;
                    self.followed += 1;
                    self.go_on(p, ctx);
                }
                Leg::Opening(opening) => {
                    let opened = ready!(opening.as_mut().poll(cx));
                    self.leg = Leg::Home;
                    ctx.slots[self.index].end_connect();
                    self.fresh = true;
                    p.adopt(ctx, opened?, &self.adm)?;
                }
                Leg::Away(leaving) => {
                    let (side, back) = ready!(leaving.as_mut().poll(cx));
                    self.side = Some(side);
                    self.leg = Leg::Home;
                    match back? {
                        Back::Answer(res) => return Poll::Ready(Ok(res)),
                        Back::Home { hop, followed } => {
                            self.hop = hop;
                            self.followed = followed;
                            self.go_on(p, ctx);
                        }
                    }
                }
            }
        }
    }

    fn sent_at(&self, p: &P) -> Option<Tick> {
        self.first_written.or_else(|| p.written())
    }

    fn bytes_out(&self, p: &P, ctx: &Shared) -> u64 {
        match self.counted {
            true => 0,
            false => p.bytes_out(ctx, Sent::Listed(&self.hop.listed)),
        }
    }

    fn bytes_in(&self, p: &P) -> u64 {
        match self.counted {
            true => 0,
            false => p.bytes_in(),
        }
    }

    /// Called first when an attempt ends: a hop away still under way is dropped (its bytes
    /// counted as far as it got). A keep-alive close that crossed a hop on the slot's own
    /// connection sends that hop again, as the protocol decides.
    fn again(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        adm: Admitted,
        _fresh: bool,
        outcome: &Outcome,
    ) -> Again {
        self.leg = Leg::Home;
        if let Some(len) = self.in_flight.len.take()
            && !adm.warmup
        {
            let out = match self.in_flight.written.get() {
                Some(_) => len,
                None => 0,
            };
            ctx.rec.bytes(out, self.in_flight.bytes_in.get());
        }
        if self.counted {
            return Again::No;
        }
        let again = p.again(
            ctx,
            adm,
            self.fresh,
            outcome,
            Sent::Listed(&self.hop.listed),
        );
        self.resume = again == Again::Now && self.followed > 0;
        again
    }

    fn finish(&mut self, p: &mut P, ctx: &Shared, index: usize) {
        self.leg = Leg::Home;
        self.side = None;
        p.finish(ctx, index);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receiver_keeps_the_last_final_heads_location_only() {
        let mut led = Led::default();
        led.head_bytes(b"HTTP/1.1 301 Moved\r\nLocation: /b\r\n\r\n");
        assert_eq!(led.location(), b"/b");
        led.head_bytes(b"HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!(led.location(), b"");
        led.head_bytes(b"HTTP/1.1 302 Found\r\nLocation: /c\r\n\r\n");
        Observe::begin(&mut led, Tick::now(), true);
        assert_eq!(led.location(), b"");
    }
}
