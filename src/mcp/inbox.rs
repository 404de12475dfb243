//! The legacy HTTP+SSE transport's stream as its calls see it: the `Inbox` that the task
//! reading a session's stream fills (the endpoint the stream names, then the answer with the id
//! awaited, with the read that brought it, and the notifications before it), and that the call
//! waits on. Memory is bounded whatever a server sends. Must not know sockets or the engine.

use std::cell::RefCell;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use super::body::{Said, said};
use super::rpc::Answer;
use crate::clock::Tick;
use crate::proto::sse::{Item, Sse};
use crate::proto::{Events, Media};

/// What the stream has brought that the session's calls wait for. One call is awaited at a
/// time: the connection sends one at a time.
#[derive(Debug, Default)]
pub struct Inbox {
    sse: Sse,
    /// The stream's response was not a 200 event stream: why.
    refused: Option<String>,
    endpoint: Option<String>,
    /// The id of the call awaited, and whether its answer's bytes are kept.
    id: u64,
    keep: bool,
    answer: Option<Result<Answer, &'static str>>,
    raw: Vec<u8>,
    last_read: Option<Tick>,
    /// The read that brought the answer.
    at: Option<Tick>,
    notifications: u32,
    progress: u32,
    /// Bytes of the stream's events since the call was sent.
    bytes: u64,
    /// The stream ended: why.
    pub(super) ended: Option<&'static str>,
    /// Who waits for the answer, and the task reading the stream.
    waiter: Option<Waker>,
    pub(super) reader: Option<Waker>,
    /// The session was dropped: the reading task ends and closes the stream.
    pub(super) dropped: bool,
}

/// What the stream said of the call awaited.
#[derive(Debug, PartialEq, Eq)]
pub struct Heard {
    pub verdict: Result<Answer, &'static str>,
    /// The read that brought the answer.
    pub at: Option<Tick>,
    /// Notifications before the answer, and how many were progress notifications.
    pub notifications: (u32, u32),
    /// Bytes of the stream's events while the call was awaited.
    pub bytes: u64,
}

impl Inbox {
    /// A call with id `id` is sent next (`keep`: its answer's bytes are wanted): forget the last.
    pub fn expect(&mut self, id: u64, keep: bool) {
        self.id = id;
        self.keep = keep;
        self.answer = None;
        self.raw.clear();
        self.at = None;
        self.notifications = 0;
        self.progress = 0;
        self.bytes = 0;
    }

    /// The answer to the call awaited once it came, or why none will.
    pub fn poll_answer(&mut self, cx: &mut Context<'_>) -> Poll<Heard> {
        let verdict = match (self.answer.take(), self.ended) {
            (Some(v), _) => v,
            (None, Some(why)) => Err(why),
            (None, None) => {
                self.waiter = Some(cx.waker().clone());
                return Poll::Pending;
            }
        };
        Poll::Ready(Heard {
            verdict,
            at: self.at,
            notifications: (self.notifications, self.progress),
            bytes: self.bytes,
        })
    }

    /// Whether the stream has ended.
    pub fn is_over(&self) -> bool {
        self.ended.is_some()
    }

    /// The answer's bytes, when `expect` asked for them.
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// The endpoint the stream named, once it has.
    pub(super) fn poll_endpoint(&mut self, cx: &mut Context<'_>) -> Poll<Result<String, String>> {
        if let Some(e) = &self.endpoint {
            return Poll::Ready(Ok(e.clone()));
        }
        if let Some(why) = &self.refused {
            return Poll::Ready(Err(why.clone()));
        }
        if let Some(why) = self.ended {
            return Poll::Ready(Err(format!("{why} before naming its endpoint")));
        }
        self.waiter = Some(cx.waker().clone());
        Poll::Pending
    }

    pub(super) fn wake(&mut self) {
        if let Some(w) = self.waiter.take() {
            w.wake();
        }
    }

    fn read(&mut self, mut bytes: &[u8]) {
        let had = (self.answer.is_some(), self.endpoint.is_some());
        while let Some(item) = self.sse.next(&mut bytes) {
            // Each event's data borrows the parser; the answer's is copied only if kept.
            let raw = match &item {
                Item::Event { data, .. } if self.keep => Some(*data),
                _ => None,
            };
            match said(item, self.id) {
                Said::Nothing => {}
                Said::Endpoint(e) => {
                    if self.endpoint.is_none() {
                        self.endpoint = Some(String::from_utf8_lossy(e).into_owned());
                    }
                }
                // The first answer or fault is the call's: the rest waits for the next call.
                _ if self.answer.is_some() => {}
                Said::Answer(a) => {
                    self.answer = Some(Ok(a));
                    self.at = self.last_read;
                    if let Some(data) = raw {
                        self.raw = data.to_vec();
                    }
                }
                Said::Notice { progress } => {
                    self.notifications += 1;
                    self.progress += u32::from(progress);
                }
                Said::Fault(why) => self.answer = Some(Err(why)),
            }
        }
        if had != (self.answer.is_some(), self.endpoint.is_some()) {
            self.wake();
        }
    }
}

/// What the stream's exchange tells the inbox.
pub(super) struct Tap(pub(super) Rc<RefCell<Inbox>>);

impl Events for Tap {
    fn read_at(&mut self, at: Tick) {
        self.0.borrow_mut().last_read = Some(at);
    }

    fn head(&mut self, status: u16, media: Media) {
        let mut i = self.0.borrow_mut();
        if status != 200 || media != Media::EventStream {
            i.refused = Some(format!(
                "it answered the GET that opens an event stream with HTTP {status}{}",
                match media == Media::EventStream {
                    true => "",
                    false => ", not an event stream",
                }
            ));
            i.wake();
        }
    }

    fn data(&mut self, bytes: &[u8]) {
        let mut i = self.0.borrow_mut();
        if i.refused.is_none() {
            i.bytes += bytes.len() as u64;
            i.read(bytes);
        }
    }
}

/// The fuzz property: whatever a session's stream brings and however it is split, reading it
/// never panics, and what the call awaited hears does not depend on the split.
pub fn check_split(data: &[u8]) {
    let read = |cuts: &[usize]| {
        let mut i = Inbox::default();
        i.expect(1, true);
        let mut from = 0;
        for &c in cuts.iter().chain(std::iter::once(&data.len())) {
            let c = c.clamp(from, data.len());
            i.read(&data[from..c]);
            from = c;
        }
        (i.endpoint, i.answer, i.raw, i.notifications, i.progress)
    };
    let whole = read(&[]);
    for cut in [
        1,
        data.len() / 3,
        data.len() / 2,
        data.len().saturating_sub(1),
    ] {
        assert_eq!(read(&[cut]), whole, "split at {cut}");
    }
    let bytes: Vec<usize> = (1..data.len().min(256)).collect();
    assert_eq!(read(&bytes), whole, "split at every byte");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fed(chunks: &[&[u8]], id: u64) -> Inbox {
        let mut i = Inbox::default();
        i.expect(id, true);
        for c in chunks {
            i.read(c);
        }
        i
    }

    #[test]
    fn the_stream_brings_the_endpoint_then_the_answer_at_every_split() {
        let stream: &[u8] = b"event: endpoint\r\ndata: /messages/?session_id=1\r\n\r\n: ping\r\n\r\n\
event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":7,\"progress\":1}}\r\n\r\n\
event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\r\n\r\n";
        for cut in 0..=stream.len() {
            let i = fed(&[&stream[..cut], &stream[cut..]], 7);
            assert_eq!(
                i.endpoint.as_deref(),
                Some("/messages/?session_id=1"),
                "{cut}"
            );
            assert_eq!(i.answer, Some(Ok(Answer::Success)), "{cut}");
            assert_eq!((i.notifications, i.progress), (1, 1), "{cut}");
            assert!(i.raw.starts_with(b"{\"jsonrpc\""), "{cut}");
        }
    }

    #[test]
    fn another_id_or_bad_json_fails_the_call_awaited() {
        let other = fed(
            &[b"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n"],
            4,
        );
        assert_eq!(
            other.answer,
            Some(Err("a response on the stream with another id"))
        );
        let bad = fed(&[b"data: {not json\n\n"], 4);
        assert!(matches!(bad.answer, Some(Err(_))));
    }

    #[test]
    fn a_stream_that_ends_ends_the_wait() {
        let mut i = Inbox::default();
        i.expect(1, false);
        let waker = Waker::noop();
        let mut cx = Context::from_waker(waker);
        assert!(i.poll_answer(&mut cx).is_pending());
        i.ended = Some("the session's event stream ended");
        let Poll::Ready(heard) = i.poll_answer(&mut cx) else {
            panic!("the wait goes on after the stream ended");
        };
        assert_eq!(heard.verdict, Err("the session's event stream ended"));
    }
}
