//! HOT: the thread's connections as its task set holds them: one `Link` per slot, over the
//! protocol the server agreed to, running the thread's workload (`Work`, chosen once per
//! thread). The static path (HTTP/1.1, an HTTP/2 group's stream slots, with `Fixed`) is inline;
//! every other link (a workload of a feature, HTTP/3) is boxed. Also the pre-connect that opens
//! each connection before the clock starts.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use crate::clock::Tick;
use crate::engine::protocols::h1_lane::H1Lane;
use crate::engine::protocols::h2_lane::{Group, H2Lane};
use crate::engine::protocols::h3_lane::{self, H3Lane};
use crate::engine::protocols::watch::Watch;
use crate::engine::slots::link::Link;
use crate::engine::slots::shared::{Connected, H2Handle, OpenConn, Shared};
use crate::engine::slots::slot::{Cancel, Slot, guarded};
use crate::engine::slots::task_set::Member;
use crate::engine::workloads::answering::Answering;
use crate::engine::workloads::called::Streaming;
use crate::engine::workloads::follow::{FollowWork, Led};
use crate::engine::workloads::list_lane::{Answers, ListWork, Listing};
use crate::engine::workloads::script_lane::{Heard, ScriptWork};
use crate::engine::workloads::workload::{Fixed, Work};
use crate::proto::grpc::Call;
use crate::proto::{Cause, Fail};
use crate::stats::Failure;

pub(in crate::engine) fn switched() -> Fail {
    Fail {
        class: Failure::H2,
        cause: Cause::Other("the server changed protocol on a reconnect"),
    }
}

/// A connection in another protocol than the lane's, closed out of line: inline, its drop (an
/// HTTP/2 or HTTP/3 connection's) grew the HTTP/1.1 loop it is never taken in.
#[cold]
#[inline(never)]
pub(in crate::engine) fn switched_from(opened: Connected) -> Fail {
    drop(opened);
    switched()
}

/// The link of slot `first` over the HTTP/1.1 connection `c`: the thread's workload, with its
/// receiver. Only the static path is inline.
fn h1_link(ctx: &Rc<Shared>, first: usize, c: OpenConn) -> Drive {
    let own = ctx.clone();
    match ctx.work {
        Work::Fixed => Drive::H1(Link::new(own, first, H1Lane::new(ctx, c, ()), Fixed)),
        Work::Watched => boxed(Link::new(
            own,
            first,
            H1Lane::new(ctx, c, watch(ctx)),
            Fixed,
        )),
        Work::Listed => {
            let proto = H1Lane::new(ctx, c, Listing);
            boxed(Link::new(own, first, proto, ListWork::default()))
        }
        Work::Answered => {
            let proto = H1Lane::new(ctx, c, Answering::default());
            boxed(Link::new(own, first, proto, ListWork::default()))
        }
        Work::Scripted => {
            let worker = scripted(ctx);
            let proto = H1Lane::new(ctx, c, Heard::new(worker.hears()));
            boxed(Link::new(own, first, proto, ScriptWork::new(worker)))
        }
        Work::Followed => {
            let proto = H1Lane::new(ctx, c, Led::default());
            let work = FollowWork::new(ctx.clone(), first);
            boxed(Link::new(own, first, proto, work))
        }
        Work::Called | Work::CalledStreams => {
            unreachable!("gRPC over HTTP/1.1: the plan speaks HTTP/2 only")
        }
    }
}

/// The link of stream slot `k` of the HTTP/3 group `g`: the thread's workload, with its
/// receiver, boxed.
fn h3_link(ctx: &Rc<Shared>, g: Rc<h3_lane::Group>, k: usize) -> Drive {
    let (own, index) = (ctx.clone(), g.base() + k);
    match ctx.work {
        Work::Fixed => boxed(Link::new(own, index, H3Lane::new(g, k, ()), Fixed)),
        Work::Watched => boxed(Link::new(own, index, H3Lane::new(g, k, watch(ctx)), Fixed)),
        Work::Listed => {
            let proto = H3Lane::new(g, k, Listing);
            boxed(Link::new(own, index, proto, ListWork::default()))
        }
        Work::Answered => {
            let proto = H3Lane::new(g, k, Answering::default());
            boxed(Link::new(own, index, proto, ListWork::default()))
        }
        Work::Scripted => {
            let worker = scripted(ctx);
            let proto = H3Lane::new(g, k, Heard::new(worker.hears()));
            boxed(Link::new(own, index, proto, ScriptWork::new(worker)))
        }
        Work::Followed => {
            let proto = H3Lane::new(g, k, Led::default());
            let work = FollowWork::new(ctx.clone(), index);
            boxed(Link::new(own, index, proto, work))
        }
        Work::Called | Work::CalledStreams => {
            unreachable!("gRPC over HTTP/3: the plan speaks HTTP/2 only")
        }
    }
}

/// A gRPC call's slot `k` of the connection `g`: a list of messages is a request list, its
/// answers judged as the call's.
fn called<E: Answers + 'static>(ctx: &Rc<Shared>, g: Rc<Group<E>>, k: usize) -> Drive {
    let index = g.base() + k;
    match ctx.setup.feature.list() {
        Some(_) => {
            let work = ListWork::default();
            boxed(Link::new(ctx.clone(), index, H2Lane::new(g, k), work))
        }
        None => boxed(Link::new(ctx.clone(), index, H2Lane::new(g, k), Fixed)),
    }
}

/// A slot's --stream receiver (or a server-streaming gRPC call's).
fn watch(ctx: &Shared) -> Watch {
    let (Some(plan), Some(gaps)) = (ctx.setup.feature.stream(), &ctx.rec.gaps) else {
        unreachable!("a watched connection in a run that does not stream");
    };
    Watch::new(plan.clone(), gaps.clone())
}

/// A link off the static path, as the thread's set holds it.
fn boxed(link: impl Future<Output = ()> + 'static) -> Drive {
    Drive::Boxed(Box::pin(link))
}

/// The thread's script, for a slot that runs it around each request.
fn scripted(ctx: &Shared) -> Rc<crate::script::Worker> {
    match &ctx.script {
        Some(worker) => worker.clone(),
        None => unreachable!("a scripted connection without a script"),
    }
}

/// The links of the pre-connected connections `open` (group and connection), one per slot that
/// runs: made one at a time as the thread's set takes them.
pub fn links(ctx: Rc<Shared>, open: Vec<(usize, Connected)>) -> Links {
    let streams = ctx.setup.streams.max(1);
    let left = open
        .iter()
        .map(|(_, c)| match c {
            Connected::H1(_) => 1,
            Connected::H2(_) | Connected::H3(_) => streams,
        })
        .sum();
    Links {
        ctx,
        open: open.into_iter(),
        group: None,
        left,
    }
}

/// An HTTP/2 group, by what its streams' responses are told to, or an HTTP/3 group; for a
/// list, its slots send the list's requests.
#[derive(Clone)]
enum Making {
    Plain(Rc<Group<()>>),
    Watched(Rc<Group<Watch>>),
    Listed(Rc<Group<Listing>>),
    Scripted(Rc<Group<Heard>>),
    Answered(Rc<Group<Answering>>),
    Followed(Rc<Group<Led>>),
    Called(Rc<Group<Call>>),
    CalledStreams(Rc<Group<Streaming>>),
    H3(Rc<h3_lane::Group>),
}

pub struct Links {
    ctx: Rc<Shared>,
    open: std::vec::IntoIter<(usize, Connected)>,
    /// The HTTP/2 group whose slots are being made, and the next slot.
    group: Option<(Making, usize)>,
    left: usize,
}

impl Iterator for Links {
    type Item = Drive;

    fn next(&mut self) -> Option<Drive> {
        let ctx = &self.ctx;
        let streams = ctx.setup.streams.max(1);
        if let Some((group, k)) = self.group.take() {
            if k + 1 < streams {
                self.group = Some((group.clone(), k + 1));
            }
            self.left -= 1;
            return Some(match group {
                Making::Plain(g) => {
                    let index = g.base() + k;
                    Drive::H2(Link::new(ctx.clone(), index, H2Lane::new(g, k), Fixed))
                }
                // --stream, a list, a script: off the static path, boxed.
                Making::Watched(g) => {
                    let index = g.base() + k;
                    boxed(Link::new(ctx.clone(), index, H2Lane::new(g, k), Fixed))
                }
                Making::Listed(g) => {
                    let index = g.base() + k;
                    let work = ListWork::default();
                    boxed(Link::new(ctx.clone(), index, H2Lane::new(g, k), work))
                }
                Making::Answered(g) => {
                    let index = g.base() + k;
                    let work = ListWork::default();
                    boxed(Link::new(ctx.clone(), index, H2Lane::new(g, k), work))
                }
                Making::Followed(g) => {
                    let index = g.base() + k;
                    let work = FollowWork::new(ctx.clone(), index);
                    boxed(Link::new(ctx.clone(), index, H2Lane::new(g, k), work))
                }
                Making::Scripted(g) => {
                    let index = g.base() + k;
                    let work = ScriptWork::new(scripted(ctx));
                    boxed(Link::new(ctx.clone(), index, H2Lane::new(g, k), work))
                }
                Making::Called(g) => called(ctx, g, k),
                Making::CalledStreams(g) => called(ctx, g, k),
                Making::H3(g) => h3_link(ctx, g, k),
            });
        }
        let (g, conn) = self.open.next()?;
        let first = g * streams;
        match conn {
            Connected::H1(c) => {
                self.left -= 1;
                Some(h1_link(ctx, first, c))
            }
            Connected::H2(c) => {
                let group = match c.lane {
                    H2Handle::Plain(_) => Making::Plain(Group::new(ctx, g, c)),
                    H2Handle::Watched(_) => Making::Watched(Group::new(ctx, g, c)),
                    H2Handle::Listed(_) => Making::Listed(Group::new(ctx, g, c)),
                    H2Handle::Scripted(_) => Making::Scripted(Group::new(ctx, g, c)),
                    H2Handle::Answered(_) => Making::Answered(Group::new(ctx, g, c)),
                    H2Handle::Followed(_) => Making::Followed(Group::new(ctx, g, c)),
                    H2Handle::Called(_) => Making::Called(Group::new(ctx, g, c)),
                    H2Handle::CalledStreams(_) => Making::CalledStreams(Group::new(ctx, g, c)),
                };
                self.group = Some((group, 0));
                self.next()
            }
            Connected::H3(c) => {
                self.group = Some((Making::H3(h3_lane::Group::new(ctx, g, c)), 0));
                self.next()
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Links {}

/// One slot's loop, as the thread's set holds it: the static path's HTTP/1.1 and HTTP/2
/// inline; every other, boxed.
// Inline is the point: boxing would add an allocation and a pointer to follow per wake-up.
pub enum Drive {
    H1(Link<H1Lane<()>, Fixed>),
    H2(Link<H2Lane<()>, Fixed>),
    Boxed(Pin<Box<dyn Future<Output = ()>>>),
}

impl Future for Drive {
    type Output = ();

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.get_mut() {
            Drive::H1(c) => Pin::new(c).poll(cx),
            Drive::H2(c) => poll_h2(c, cx),
            Drive::Boxed(f) => f.as_mut().poll(cx),
        }
    }
}

/// An HTTP/2 slot's turn, out of line: with it inline, `Drive::poll` grew too large for the
/// compiler to inline it into the task set's loop, which cost the HTTP/1.1 path about 20
/// instructions a request (callgrind).
#[inline(never)]
fn poll_h2(c: &mut Link<H2Lane<()>, Fixed>, cx: &mut Context<'_>) -> Poll<()> {
    Pin::new(c).poll(cx)
}

impl Member for Drive {
    /// A link's slot is read and written on every request; a boxed one's slots are reached
    /// through its own state.
    fn companion(&self) -> usize {
        match self {
            Drive::H1(c) => c.slot_address(),
            Drive::H2(c) => c.slot_address(),
            Drive::Boxed(_) => 0,
        }
    }
}

/// Why a connection did not open before the clock started.
#[derive(Debug)]
pub struct NotOpen {
    pub why: Unopened,
    pub class: Failure,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unopened {
    TimedOut,
    Failed,
    /// Still connecting when the connection phase ended (its deadline, or Ctrl-C).
    CutOff,
}

/// Opens a connection before the clock starts, on the first slot of its group. Failures count as
/// connection failures, not request failures: no request was attempted.
pub async fn preconnect(ctx: &Shared, slot: &Slot) -> Result<Connected, NotOpen> {
    slot.begin_connect(Tick::now());
    // Inline: the caller boxes each attempt and frees it on return (`thread::open_all`).
    let r = guarded(slot, std::pin::pin!(ctx.open(false, slot))).await;
    slot.end_connect();
    match r {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(fail)) => Err(NotOpen {
            why: Unopened::Failed,
            class: fail.class,
            message: fail.to_string(),
        }),
        Err(Cancel::Interrupted) => Err(NotOpen {
            why: Unopened::CutOff,
            class: Failure::Connect,
            message: match ctx.stop_requested() {
                true => "interrupted before the run started".into(),
                false => format!(
                    "still connecting when --setup-timeout ({:?}) ended the connection phase",
                    ctx.setup.setup_timeout
                ),
            },
        }),
        Err(_) => {
            let msg = slot.connect_phase().timed_out(ctx.setup.connect_timeout);
            ctx.rec.connect_failed(|| msg.clone());
            Err(NotOpen {
                why: Unopened::TimedOut,
                class: Failure::Connect,
                message: msg,
            })
        }
    }
}
