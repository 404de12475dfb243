//! HOT: what varies by feature beside the protocol, `Workload`: which request each attempt
//! sends, what happens before it is admitted and once it ends, how its answer is judged and
//! which row it is counted in. The loop (`link::Link<P, W>`) asks the workload, which asks its
//! protocol `P`; every method defaults to the protocol's with the run's own request, so
//! `Fixed`, the static path, is the protocol alone and compiles to it. A request list
//! (`list_lane`) and a script (`script_lane`) override what they change. Must not account for
//! attempts (the loop does) or allocate per request on the static path.

use std::task::{Context, Poll};

use crate::clock::Tick;
use crate::engine::protocols::protocol::{Again, Outcome, Protocol, Ready, Sent};
use crate::engine::slots::attempt::Ended;
use crate::engine::slots::shared::{Admitted, Connected, Feature, Setup, Shared};
use crate::proto::{Fail, Response};

/// What a slot's attempts send and how they end, over the protocol `P`.
pub trait Workload<P: Protocol> {
    /// Whether attempts are recorded by the place of their request in a list (`entry`):
    /// without, the loop skips that at compile time.
    const ENTRIES: bool = false;

    /// Waits until the slot may take an attempt (a script's `delay()`, then the protocol).
    #[inline(always)]
    fn poll_ready(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        index: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Ready> {
        p.poll_ready(ctx, index, cx)
    }

    /// An attempt admitted earlier that goes before any new one (a pipelined batch's next
    /// request; one the server refused unprocessed).
    #[inline(always)]
    fn retry(&mut self, p: &mut P) -> Option<Admitted> {
        p.retry()
    }

    /// Starts the attempt `adm`: true when it goes on an open connection, false when one must
    /// be opened for it first.
    #[inline(always)]
    fn begin(&mut self, p: &mut P, ctx: &Shared, adm: &Admitted) -> bool {
        p.begin(ctx, adm, Sent::Own)
    }

    /// Takes the connection opened for the current attempt `adm`.
    #[inline(always)]
    fn adopt(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        opened: Connected,
        adm: &Admitted,
    ) -> Result<(), Fail> {
        p.adopt(ctx, opened, adm)
    }

    /// Sends the attempt's request and reads (and judges) its response.
    #[inline(always)]
    fn poll_exchange(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Response, Fail>> {
        p.poll_send(ctx, cx, Sent::Own)
    }

    /// The row of the current attempt's request (`ENTRIES`).
    #[inline(always)]
    fn entry(&self) -> usize {
        0
    }

    /// When an answer came that failed the current attempt though it was an answer (an MCP
    /// tool's error): its latency counts in its row.
    #[inline(always)]
    fn answered(&self, _p: &P) -> Option<Tick> {
        None
    }

    /// When the attempt's first request had been handed over in full, if it was: where its
    /// wait for the answer starts.
    #[inline(always)]
    fn sent_at(&self, p: &P) -> Option<Tick> {
        p.written()
    }

    /// Bytes the attempt wrote that the loop must count itself.
    #[inline(always)]
    fn bytes_out(&self, p: &P, ctx: &Shared) -> u64 {
        p.bytes_out(ctx, Sent::Own)
    }

    /// Bytes the attempt read that the loop must count itself.
    #[inline(always)]
    fn bytes_in(&self, p: &P) -> u64 {
        p.bytes_in()
    }

    /// Whether the attempt `adm`, which ended as `outcome`, goes again instead of being
    /// accounted for. `fresh`: its connection was opened for it.
    #[inline(always)]
    fn again(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        adm: Admitted,
        fresh: bool,
        outcome: &Outcome,
    ) -> Again {
        p.again(ctx, adm, fresh, outcome, Sent::Own)
    }

    /// The attempt was accounted for as it `ended`.
    #[inline(always)]
    fn ended(&mut self, p: &mut P, ctx: &Shared, ended: Ended) {
        p.ended(ctx, ended);
    }

    /// The slot's loop is over.
    #[inline(always)]
    fn finish(&mut self, p: &mut P, ctx: &Shared, index: usize) {
        p.finish(ctx, index);
    }
}

/// The run's own request, built once, on every attempt: the static path.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fixed;

impl<P: Protocol> Workload<P> for Fixed {}

/// Which workload a thread's slots run, and so what their responses are told to: chosen once
/// per thread from its setup, and the same for every protocol (`drive` makes each slot's link
/// of it; `open` gives an HTTP/2 connection's streams its receiver).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// The run's own request (`Fixed`), told to nothing: the static path.
    Fixed,
    /// The same, its responses measured as streams (--stream: `Watch`).
    Watched,
    /// A request list (`ListWork` with `Listing`).
    Listed,
    /// `spate mcp`'s calls (`ListWork` with `Answering`).
    Answered,
    /// A script per request (`ScriptWork` with `Heard`).
    Scripted,
    /// --redirect (`FollowWork` with `Led`).
    Followed,
    /// `spate grpc`'s calls (`Fixed` with `proto::grpc::Call`, which judges each by its
    /// status). HTTP/2 only: the plan refuses every other protocol.
    Called,
    /// The same, of a server-streaming method: each message timed as a stream's event
    /// (`called::Streaming`).
    CalledStreams,
}

impl Work {
    /// The workload of a thread with `setup` whose script state is `script` (a script per
    /// request comes with no feature: the plan refuses it with --stream and --redirect).
    pub fn of(setup: &Setup, script: Option<&crate::script::Worker>) -> Work {
        match &setup.feature {
            Feature::Follow(_) => Work::Followed,
            Feature::Grpc(g) if g.stream.is_some() => Work::CalledStreams,
            Feature::Grpc(_) => Work::Called,
            Feature::List(l) if l.mcp.is_some() => Work::Answered,
            Feature::List(_) => Work::Listed,
            _ if script.is_some_and(crate::script::Worker::runs_per_request) => Work::Scripted,
            Feature::Stream(_) => Work::Watched,
            Feature::None => Work::Fixed,
        }
    }
}
