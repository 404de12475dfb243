//! HOT: the seam between the one connection loop (`link`) and a protocol: what a lane must say
//! for the loop to admit, (re)connect, exchange and account for attempts on one slot. HTTP/1.1
//! (`h1_lane`) and an HTTP/2 stream slot (`h2_lane`) implement it; the loop is generic over it,
//! so each protocol's loop is compiled on its own, with no virtual call. Must not account for
//! anything itself: the loop does, once for every lane.

use std::task::{Context, Poll};

use super::attempt::Ended;
use super::shared::{Admitted, Connected, Shared};
use super::slot::{Cancel, Slot};
use super::watch::Streamed;
use crate::clock::Tick;
use crate::proto::{Fail, Response};

/// How an exchange ended, as the loop sees it: a response, a failure the lane reported, or a
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
    /// The lane queued it to go first on the next connection (HTTP/2: refused unprocessed).
    Queued,
}

/// One slot's way of exchanging requests.
pub trait Lane {
    /// Whether the lane's responses may be measured as streams (--stream): without, the loop
    /// skips everything about streams at compile time.
    const STREAMS: bool = false;

    /// Waits until the slot may take an attempt (HTTP/2: a place for a stream on a live
    /// connection, or none to wait for, when this slot opens the next).
    fn poll_ready(&mut self, ctx: &Shared, index: usize, cx: &mut Context<'_>) -> Poll<Ready>;

    /// An attempt admitted earlier that goes before any new one.
    #[inline(always)]
    fn retry(&mut self) -> Option<Admitted> {
        None
    }

    /// Starts the attempt `adm`: true when it goes on an open connection, false when one must
    /// be opened for it first.
    fn begin(&mut self, ctx: &Shared, adm: &Admitted) -> bool;

    /// Takes the connection opened for the current attempt `adm`.
    fn adopt(&mut self, ctx: &Shared, opened: Connected, adm: &Admitted) -> Result<(), Fail>;

    /// Writes the request and reads the response.
    fn poll_exchange(&mut self, ctx: &Shared, cx: &mut Context<'_>)
    -> Poll<Result<Response, Fail>>;

    /// The exchange is waiting: what the slot must know of it (the last read, for
    /// --idle-timeout). Nothing by default.
    #[inline(always)]
    fn waiting(&self, _slot: &Slot) {}

    /// The attempt ended: what its response did as a stream, if it was watched as one (and
    /// the receiver is reset for the next, however it ended).
    #[inline(always)]
    fn streamed(&mut self) -> Option<Streamed> {
        None
    }

    /// Whether the lane sends the requests of a request list: the loop then records each
    /// attempt by the place of its request (`entry`). Without, it skips that at compile time.
    const ENTRIES: bool = false;

    /// The place in the request list of the current attempt's request.
    #[inline(always)]
    fn entry(&self) -> usize {
        0
    }

    /// When an answer came that failed the current attempt though it was an answer (an MCP
    /// tool's error): its latency counts in its row.
    #[inline(always)]
    fn answered(&self) -> Option<Tick> {
        None
    }

    /// When the request had been handed over in full, if it was.
    fn written(&self) -> Option<Tick>;

    /// Bytes this attempt wrote and read that the loop must count itself: a lane that counts
    /// bytes per connection (HTTP/2) says 0.
    fn bytes_out(&self, ctx: &Shared) -> u64;
    fn bytes_in(&self) -> u64;

    /// Whether the attempt `adm`, which ended as `outcome`, goes again instead of being
    /// accounted for. `fresh`: its connection was opened for it.
    fn again(&mut self, ctx: &Shared, adm: Admitted, fresh: bool, outcome: &Outcome) -> Again;

    /// The attempt was accounted for as it `ended`: the lane keeps or drops what it holds.
    fn ended(&mut self, ctx: &Shared, ended: Ended);

    /// The slot's loop is over: close and count what is left.
    fn finish(&mut self, ctx: &Shared, index: usize);
}
