//! HOT: the transport half of a slot, `Protocol`: how HTTP/1.1 (`h1_lane`), an HTTP/2 stream
//! slot (`h2_lane`) or an HTTP/3 stream slot (`h3_lane`) takes a connection and exchanges one
//! request for its response, whichever request it is told to send (`Sent`), and the words the
//! loop and the protocols share (`Ready`, `Again`, `Outcome`). What varies by feature is the
//! `workload::Workload` beside it. Must not account for attempts, choose requests, or allocate
//! per request.

use std::task::{Context, Poll};

use crate::clock::Tick;
use crate::engine::protocols::watch::{Observe, Streamed};
use crate::engine::slots::attempt::Ended;
use crate::engine::slots::shared::{Admitted, Connected, Listed, OpenConn, Shared};
use crate::engine::slots::slot::{Cancel, Slot};
use crate::proto::{Fail, Response};

/// How an exchange ended, as the loop sees it: a response, a failure the protocol reported, or a
/// cancellation by the sweeper.
pub type Outcome = Result<Result<Response, Fail>, Cancel>;

/// Whether a slot may take its next attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ready {
    Go,
    /// The slot takes no more attempts.
    Over,
    /// A connection that served nothing was closed: wait as after a failed connect first.
    BackOff,
}

/// What comes of an attempt that did not get an answer but may go again as the same attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Again {
    /// It is accounted for as it ended.
    No,
    /// It goes again at once, on a new connection (HTTP/1.1: a keep-alive close crossed it).
    Now,
    /// The protocol queued it to go first on the next connection (HTTP/2, HTTP/3: refused
    /// unprocessed).
    Queued,
}

/// What a protocol sends: HTTP/1.1's bytes as they are written, or the parts of a request as
/// HTTP/2's or HTTP/3's frames carry them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    H1,
    H2,
    H3,
}

/// The request an attempt sends.
#[derive(Debug, Clone, Copy)]
pub enum Sent<'a> {
    /// The run's own, built once.
    Own,
    /// One built in every protocol's form (a list's entry; a script's request read back).
    Listed(&'a Listed),
    /// HTTP/1.1 bytes as a script wrote them (one request, or a pipelined batch), and whether
    /// the one whose response is read is a HEAD's. HTTP/1.1 only.
    Written(&'a [u8], bool),
}

/// One slot's transport. Each method that concerns the request takes `req`, the request the
/// attempt sends.
pub trait Protocol {
    /// Whether its responses may be measured as streams (--stream).
    const STREAMS: bool = false;

    /// What it sends.
    const FORM: Form = Form::H1;

    /// What each response is told as it arrives.
    type Events: Observe;

    /// Waits until the slot may take an attempt (HTTP/2 and HTTP/3: a place on a live
    /// connection, or none to wait for, when this slot opens the next).
    fn poll_ready(&mut self, ctx: &Shared, index: usize, cx: &mut Context<'_>) -> Poll<Ready>;

    /// An attempt the server refused unprocessed, which goes before any new one.
    #[inline(always)]
    fn retry(&mut self) -> Option<Admitted> {
        None
    }

    /// Starts the attempt `adm`, which sends `req`: true when it goes on an open connection,
    /// false when one must be opened for it first.
    fn begin(&mut self, ctx: &Shared, adm: &Admitted, req: Sent<'_>) -> bool;

    /// Takes the connection opened for the current attempt `adm`.
    fn adopt(&mut self, ctx: &Shared, opened: Connected, adm: &Admitted) -> Result<(), Fail>;

    /// A response was read that does not end the attempt (a redirect it follows); its
    /// connection may carry another request if `keep_alive`: keep it or close it.
    fn hop_ended(&mut self, ctx: &Shared, keep_alive: bool);

    /// The current attempt `adm` goes on with `req` (the next request of a redirect chain):
    /// true when it goes on an open connection, false when one must be opened for it first
    /// (then `adopt`).
    fn hop_begin(&mut self, ctx: &Shared, adm: &Admitted, req: Sent<'_>) -> bool;

    /// Sends `req` (the same on every poll of an attempt) and reads its response.
    fn poll_send(
        &mut self,
        ctx: &Shared,
        cx: &mut Context<'_>,
        req: Sent<'_>,
    ) -> Poll<Result<Response, Fail>>;

    /// The exchange is waiting: what the slot must know of it (the last read, for
    /// --idle-timeout).
    #[inline(always)]
    fn waiting(&self, _slot: &Slot) {}

    /// What the attempt's response did as a stream, if it was watched as one.
    #[inline(always)]
    fn streamed(&mut self) -> Option<Streamed> {
        None
    }

    /// When the request had been handed over in full, if it was.
    fn written(&self) -> Option<Tick>;

    /// Bytes the attempt wrote and read that the loop must count itself: a protocol that
    /// counts them per connection (HTTP/2, HTTP/3) says 0.
    fn bytes_out(&self, ctx: &Shared, req: Sent<'_>) -> u64;
    fn bytes_in(&self) -> u64;

    /// Whether the attempt `adm`, which sent `req` and ended as `outcome`, goes again instead
    /// of being accounted for. `fresh`: its connection was opened for it.
    fn again(
        &mut self,
        ctx: &Shared,
        adm: Admitted,
        fresh: bool,
        outcome: &Outcome,
        req: Sent<'_>,
    ) -> Again;

    /// The attempt was accounted for as it `ended`: keep or drop the connection.
    fn ended(&mut self, ctx: &Shared, ended: Ended);

    /// The slot's loop is over: close and count what is left.
    fn finish(&mut self, ctx: &Shared, index: usize);

    /// `f` on the receiver of the current attempt's response; `None` when the protocol holds
    /// none now (HTTP/2 between connections).
    fn with_events<R>(&mut self, f: impl FnOnce(&mut Self::Events) -> R) -> Option<R>;

    /// `f` on that receiver, to read it.
    fn peek_events<R>(&self, f: impl FnOnce(&Self::Events) -> R) -> Option<R>;

    /// The connection must carry no attempt after the current one (the MCP session it
    /// carried ended): HTTP/1.1 closes it when the attempt fails, as after any failure; HTTP/2
    /// and HTTP/3 end it for new attempts, so that the next connection opens a new session.
    #[inline(always)]
    fn retire(&mut self) {}

    /// Opens, on the slot's connection and beside its attempts, a stream with `get` that lasts
    /// while the handle is held: the legacy MCP transport's session stream of a call in a
    /// session of its own. `None` from a protocol whose connection is the slot's alone (HTTP/1.1
    /// opens the stream on a connection of its own as it connects).
    fn listen(&mut self, _ctx: &Shared, _get: &Listed) -> Option<crate::mcp::legacy::Listening> {
        None
    }

    /// Hands over the slot's HTTP/1.1 connection whole, counting what it carried (MCP's
    /// session end asks its server over it); `None` from a protocol whose connection its
    /// slots share.
    fn take_conn(&mut self, _ctx: &Shared) -> Option<OpenConn> {
        None
    }
}
