//! The HTTP/1.1 lane: write the prepared request bytes, then read one response through the
//! thread's shared read space, feeding the sans-IO parser inside `poll`. A connection keeps no
//! read buffer of its own unless a head straddles reads or the server sent bytes early.

use crate::clock::Tick;
use std::cell::RefCell;
use std::future::poll_fn;
use std::pin::Pin;
use std::task::{Poll, ready};

use futures_util::FutureExt as _;
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};

use super::response::feed_with_carry;
use super::{HeadMemo, ResponseParser};
use crate::net::Stream;
use crate::proto::{Fail, Response};
use crate::stats::Failure;

/// One HTTP/1.1 connection.
#[derive(Debug)]
pub struct Conn {
    stream: Stream,
    /// Bytes read but not yet consumed: an incomplete head, or the start of a later response.
    carry: Vec<u8>,
}

/// What all connections of a thread read through, one at a time: the read buffer, and the memory
/// of the last response head (the next one is usually identical).
#[derive(Debug)]
pub struct ReadSpace {
    pub buf: Box<[u8]>,
    pub heads: HeadMemo,
}

impl ReadSpace {
    pub fn new(bytes: usize) -> ReadSpace {
        ReadSpace {
            buf: vec![0; bytes].into_boxed_slice(),
            heads: HeadMemo::default(),
        }
    }
}

impl Conn {
    pub fn new(stream: Stream) -> Conn {
        Conn {
            stream,
            carry: Vec::new(),
        }
    }
}

/// Writes the prepared request bytes as they are.
pub async fn send(conn: &mut Conn, request: &[u8]) -> Result<(), Fail> {
    conn.stream
        .write_all(request)
        .await
        .map_err(|e| Fail::io(Failure::Write, e))
}

/// After a write that failed because the server closed or reset the connection: a server may
/// answer before it has read the whole request (a 413 to a large upload) and close. What it sent
/// is already in the socket's buffer and stays readable after the reset (Linux), so one poll of
/// `receive` finds it; a complete response is the answer, and the connection is not reused.
/// Otherwise the write's failure stands. Synchronous, so that this rare path adds no state to
/// the connection's future.
pub fn early_answer(
    conn: &mut Conn,
    failed: Fail,
    head_request: bool,
    space: &RefCell<ReadSpace>,
) -> Result<Response, Fail> {
    if failed.class != Failure::Closed {
        return Err(failed);
    }
    match receive(conn, head_request, space).now_or_never() {
        Some(Ok(response)) => Ok(Response {
            keep_alive: false,
            ..response
        }),
        _ => Err(failed),
    }
}

/// Reads one response. `space` is the thread's; it is borrowed only inside a poll, never across
/// an await.
pub async fn receive(
    conn: &mut Conn,
    head_request: bool,
    space: &RefCell<ReadSpace>,
) -> Result<Response, Fail> {
    let mut parser = ResponseParser::new(head_request);
    let mut bytes_in = 0u64;
    let mut first_byte = None;
    // When the bytes that completed the response were read: one clock read per read serves as
    // both first byte and end when a response arrives whole, as it almost always does.
    let mut last_read = None;
    let mut done = false;
    // The server may have answered before we asked (or sent two responses to one request).
    if !conn.carry.is_empty() {
        bytes_in = conn.carry.len() as u64;
        let heads = &mut space.borrow_mut().heads;
        done = feed_with_carry(&mut parser, &mut conn.carry, &[], heads).map_err(Fail::parse)?;
        bytes_in -= conn.carry.len() as u64;
    }
    if !done {
        poll_fn(|cx| {
            let mut space = space.borrow_mut();
            let ReadSpace { buf, heads } = &mut *space;
            loop {
                let mut buf = ReadBuf::new(&mut buf[..]);
                ready!(Pin::new(&mut conn.stream).poll_read(cx, &mut buf))
                    .map_err(|e| Fail::io(Failure::Read, e))?;
                let data = buf.filled();
                if data.is_empty() {
                    // A body delimited by the close ends now, not at its last bytes.
                    last_read = None;
                    return Poll::Ready(if parser.finish_at_eof() {
                        Ok(())
                    } else {
                        Err(Fail::eof())
                    });
                }
                let now = Tick::now();
                first_byte.get_or_insert(now);
                last_read = Some(now);
                let before = conn.carry.len();
                let complete = feed_with_carry(&mut parser, &mut conn.carry, data, heads)
                    .map_err(Fail::parse)?;
                // Bytes that stay in `carry` for a later response are not this one's.
                bytes_in += (before + data.len()).saturating_sub(conn.carry.len()) as u64;
                if complete {
                    return Poll::Ready(Ok(()));
                }
            }
        })
        .await?;
    }
    Ok(Response {
        status: parser.status(),
        keep_alive: parser.keep_alive(),
        body_bytes: parser.body_bytes(),
        bytes_in,
        first_byte,
        // Completed from `carry` alone: the bytes were there before this request.
        done: last_read.unwrap_or_else(Tick::now),
    })
}
