//! The HTTP/1.1 lane: write the prepared request bytes, then read one response through the
//! thread's shared read space, feeding the sans-IO parser inside `poll`. A connection keeps no
//! read buffer of its own unless a head straddles reads or the server sent bytes early.

use crate::clock::Tick;
use std::cell::RefCell;
use std::future::poll_fn;
use std::io;
use std::task::{Poll, ready};

use futures_util::FutureExt as _;

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
    let mut rest = request;
    poll_fn(|cx| {
        while !rest.is_empty() {
            match ready!(conn.stream.poll_send(cx, rest)) {
                Ok(0) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Ok(n) => rest = &rest[n..],
                Err(e) => return Poll::Ready(Err(e)),
            }
        }
        Poll::Ready(Ok(()))
    })
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
    match read_response(conn, head_request, space).now_or_never() {
        Some(Ok((response, _))) => Ok(Response {
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
    let (response, waited) = read_response(conn, head_request, space).await?;
    if !waited {
        // The response was there before we looked (early bytes, or a server that answers ahead
        // of its requests): nothing made this connection wait, so give the thread's other
        // connections their turn once the task budget is spent. The socket calls spend none.
        tokio::task::coop::consume_budget().await;
    }
    Ok(response)
}

/// One response, and whether reading it had to wait for the socket.
async fn read_response(
    conn: &mut Conn,
    head_request: bool,
    space: &RefCell<ReadSpace>,
) -> Result<(Response, bool), Fail> {
    let mut parser = ResponseParser::new(head_request);
    let mut bytes_in = 0u64;
    let mut first_byte = None;
    // When the bytes that completed the response were read: one clock read per read serves as
    // both first byte and end when a response arrives whole, as it almost always does.
    let mut last_read = None;
    let mut done = false;
    let mut waited = false;
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
                let n = match conn.stream.poll_recv(cx, buf) {
                    Poll::Ready(r) => r.map_err(|e| Fail::io(Failure::Read, e))?,
                    Poll::Pending => {
                        waited = true;
                        return Poll::Pending;
                    }
                };
                let data = &buf[..n];
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
    let response = Response {
        status: parser.status(),
        keep_alive: parser.keep_alive(),
        body_bytes: parser.body_bytes(),
        bytes_in,
        first_byte,
        // Completed from `carry` alone: the bytes were there before this request.
        done: last_read.unwrap_or_else(Tick::now),
    };
    Ok((response, waited))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    #[test]
    fn responses_that_need_no_wait_still_let_other_tasks_run() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let local = tokio::task::LocalSet::new();
        local.block_on(&rt, async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let client = tokio::net::TcpStream::connect(listener.local_addr().unwrap());
            let (client, _server) = futures_util::future::join(client, listener.accept()).await;
            let mut conn = Conn::new(Stream::Tcp(client.unwrap()));
            // A server that answered 1,000 requests ahead: each receive completes from what is
            // already read, without touching the socket.
            conn.carry = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n".repeat(1000);
            let space = RefCell::new(ReadSpace::new(1024));
            let other_ran = Rc::new(Cell::new(false));
            let flag = other_ran.clone();
            tokio::task::spawn_local(async move { flag.set(true) });
            let mut before_other = 0;
            for _ in 0..1000 {
                let r = receive(&mut conn, false, &space).await.unwrap();
                assert_eq!(r.status, 200);
                if !other_ran.get() {
                    before_other += 1;
                }
            }
            assert!(conn.carry.is_empty());
            assert!(other_ran.get() && before_other < 1000, "{before_other}");
        });
    }
}
