//! The HTTP/1.1 slow lane: one request and its response as an `async fn` over the stream's
//! `AsyncRead`/`AsyncWrite`, through a read space the caller owns, for exchanges off the static
//! path (--redirect's chains). The parse is the hot lane's (`feed_with_carry`), so the verdicts
//! are the same; the I/O is tokio's own. Kept apart from `lane` on purpose: a second caller of the
//! hot lane made the compiler stop inlining it into the connection's future (67 more instructions
//! per request, callgrind). Must not be used on the static path.

use std::cell::Cell;

use futures_util::FutureExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::ResponseParser;
use super::lane::{Conn, ReadSpace};
use super::response::feed_with_carry;
use crate::clock::Tick;
use crate::proto::Failure;
use crate::proto::{Events, Fail, Response};

/// How far an exchange got, in cells the caller keeps: they outlive an exchange that is
/// cancelled (a timeout), whose bytes are counted all the same.
#[derive(Debug, Clone, Copy)]
pub struct Reached<'a> {
    /// When the request had been handed over in full.
    pub written: &'a Cell<Option<Tick>>,
    /// Bytes of the response received so far.
    pub bytes_in: &'a Cell<u64>,
}

impl Reached<'_> {
    fn add_in(&self, n: usize) {
        self.bytes_in.set(self.bytes_in.get() + n as u64);
    }
}

/// Writes `request` on `conn`, then reads its response (`head_request`: the request was HEAD),
/// telling `events` what it says as it arrives.
pub async fn exchange<E: Events>(
    conn: &mut Conn,
    request: &[u8],
    head_request: bool,
    space: &mut ReadSpace,
    reached: Reached<'_>,
    events: &mut E,
) -> Result<Response, Fail> {
    reached.written.set(None);
    reached.bytes_in.set(0);
    let mut parser = ResponseParser::new(head_request);
    let sent = async {
        conn.stream.write_all(request).await?;
        conn.stream.flush().await
    };
    if let Err(e) = sent.await {
        return early_answer(
            conn,
            &mut parser,
            space,
            reached,
            Fail::io(Failure::Write, e),
            events,
        );
    }
    reached.written.set(Some(Tick::now()));
    if feed_carry(conn, &mut parser, space, reached, events)? {
        return Ok(response(&parser, reached, None, Tick::now()));
    }
    let mut first_byte = None;
    loop {
        let n = conn
            .stream
            .read(&mut space.buf)
            .await
            .map_err(|e| Fail::io(Failure::Read, e))?;
        if n == 0 {
            return match parser.finish_at_eof() {
                true => Ok(response(&parser, reached, first_byte, Tick::now())),
                false => Err(Fail::eof()),
            };
        }
        let now = Tick::now();
        first_byte.get_or_insert(now);
        events.read_at(now);
        if feed(conn, &mut parser, space, n, reached, events)? {
            return Ok(response(&parser, reached, first_byte, now));
        }
    }
}

/// The bytes the connection already holds; true if they complete the response.
fn feed_carry<E: Events>(
    conn: &mut Conn,
    parser: &mut ResponseParser,
    space: &mut ReadSpace,
    reached: Reached<'_>,
    events: &mut E,
) -> Result<bool, Fail> {
    if conn.carry.is_empty() {
        return Ok(false);
    }
    let before = conn.carry.len();
    let done = feed_with_carry(parser, &mut conn.carry, &[], &mut space.heads, events)
        .map_err(Fail::parse)?;
    reached.add_in(before - conn.carry.len());
    Ok(done)
}

/// Parses the `n` bytes just read into the space; true if they complete the response.
fn feed<E: Events>(
    conn: &mut Conn,
    parser: &mut ResponseParser,
    space: &mut ReadSpace,
    n: usize,
    reached: Reached<'_>,
    events: &mut E,
) -> Result<bool, Fail> {
    let ReadSpace { buf, heads } = space;
    let before = conn.carry.len();
    match feed_with_carry(parser, &mut conn.carry, &buf[..n], heads, events) {
        Ok(complete) => {
            // Bytes that stay in `carry` for a later response are not this one's.
            reached.add_in((before + n).saturating_sub(conn.carry.len()));
            Ok(complete)
        }
        Err(e) => {
            reached.add_in(before + n);
            Err(Fail::parse(e))
        }
    }
}

/// After a write the server's close cut short: what it answered before closing (a 413 to an
/// upload), if it is whole and already here, is the answer, on a connection not to be reused.
fn early_answer<E: Events>(
    conn: &mut Conn,
    parser: &mut ResponseParser,
    space: &mut ReadSpace,
    reached: Reached<'_>,
    failed: Fail,
    events: &mut E,
) -> Result<Response, Fail> {
    if failed.class != Failure::Closed {
        return Err(failed);
    }
    let complete = match feed_carry(conn, parser, space, reached, events) {
        Ok(true) => true,
        Ok(false) => match conn.stream.read(&mut space.buf).now_or_never() {
            Some(Ok(n)) if n > 0 => feed(conn, parser, space, n, reached, events).unwrap_or(false),
            _ => false,
        },
        Err(_) => false,
    };
    match complete {
        true => Ok(Response {
            keep_alive: false,
            ..response(parser, reached, None, Tick::now())
        }),
        false => Err(failed),
    }
}

fn response(
    parser: &ResponseParser,
    reached: Reached<'_>,
    first_byte: Option<Tick>,
    done: Tick,
) -> Response {
    Response {
        status: parser.status(),
        keep_alive: parser.keep_alive(),
        body_bytes: parser.body_bytes(),
        bytes_in: reached.bytes_in.get(),
        first_byte,
        done,
    }
}
