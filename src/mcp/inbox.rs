//! The legacy HTTP+SSE transport's stream as its calls see it: the `Inbox` that the task
//! reading a session's stream fills (the endpoint the stream names, then the answer with the id
//! awaited, with the read that brought it, and the notifications before it), and that the call
//! waits on. Memory is bounded whatever a server sends. Must not know sockets or the engine.

use std::cell::RefCell;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use super::body::{OTHER_ID, Said, said_among};
use super::rpc::Answer;
use crate::clock::Tick;
use crate::proto::sse::{Item, Sse};
use crate::proto::{Events, Media};

/// What the stream has brought that the session's calls wait for. Each slot that shares the
/// session has one call at a time awaited (`expect`), with an id of its own.
#[derive(Debug, Default)]
pub struct Inbox {
    sse: Sse,
    /// The stream's response was not a 200 event stream: why.
    refused: Option<String>,
    endpoint: Option<String>,
    /// Each slot's last call.
    calls: Vec<Call>,
    /// The slots whose call awaits its answer, oldest first: a notification, a fault without
    /// an id and the stream's bytes are the oldest's.
    order: Vec<usize>,
    /// The ids of the calls awaited, then of each slot's call that ended unanswered (its
    /// answer, if it comes late, is for no one): made for each event.
    ids: Vec<u64>,
    /// Each slot's call that ended unanswered.
    stale: Vec<Option<u64>>,
    last_read: Option<Tick>,
    /// The stream ended: why.
    pub(super) ended: Option<&'static str>,
    /// Who waits for the endpoint, and the task reading the stream.
    waiter: Option<Waker>,
    pub(super) reader: Option<Waker>,
    /// The session was dropped: the reading task ends and closes the stream.
    pub(super) dropped: bool,
}

/// One slot's call.
#[derive(Debug, Default)]
struct Call {
    id: u64,
    /// Whether its answer's bytes are kept.
    keep: bool,
    answer: Option<Result<Answer, &'static str>>,
    raw: Vec<u8>,
    /// The read that brought the answer.
    at: Option<Tick>,
    notifications: u32,
    progress: u32,
    /// Bytes of the stream's events while the call was the oldest awaited.
    bytes: u64,
    waiter: Option<Waker>,
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
    /// Slot `k`'s call with id `id` is sent next (`keep`: its answer's bytes are wanted): the
    /// slot's last call is forgotten, and its answer, if it never came, will be stale.
    pub fn expect(&mut self, k: usize, id: u64, keep: bool) {
        if self.calls.len() <= k {
            self.calls.resize_with(k + 1, Call::default);
            self.stale.resize(k + 1, None);
        }
        if let Some(at) = self.order.iter().position(|&o| o == k) {
            self.order.remove(at);
            self.stale[k] = Some(self.calls[k].id);
        }
        self.calls[k] = Call {
            id,
            keep,
            raw: std::mem::take(&mut self.calls[k].raw),
            ..Call::default()
        };
        self.calls[k].raw.clear();
        self.order.push(k);
    }

    /// The answer to slot `k`'s call once it came, or why none will.
    pub fn poll_answer(&mut self, k: usize, cx: &mut Context<'_>) -> Poll<Heard> {
        let Some(call) = self.calls.get_mut(k) else {
            return Poll::Ready(Heard {
                verdict: Err("no call was sent"),
                at: None,
                notifications: (0, 0),
                bytes: 0,
            });
        };
        let verdict = match (call.answer.take(), self.ended) {
            (Some(v), _) => v,
            (None, Some(why)) => Err(why),
            (None, None) => {
                call.waiter = Some(cx.waker().clone());
                return Poll::Pending;
            }
        };
        self.order.retain(|&o| o != k);
        Poll::Ready(Heard {
            verdict,
            at: call.at,
            notifications: (call.notifications, call.progress),
            bytes: call.bytes,
        })
    }

    /// Whether the stream has ended.
    pub fn is_over(&self) -> bool {
        self.ended.is_some()
    }

    /// The answer's bytes of slot `k`'s call, when `expect` asked for them.
    pub fn raw(&self, k: usize) -> &[u8] {
        self.calls.get(k).map_or(&[], |c| &c.raw)
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

    /// Everyone waiting is told: the stream refused, ended, or named its endpoint.
    pub(super) fn wake(&mut self) {
        if let Some(w) = self.waiter.take() {
            w.wake();
        }
        for c in &mut self.calls {
            if let Some(w) = c.waiter.take() {
                w.wake();
            }
        }
    }

    fn read(&mut self, mut bytes: &[u8]) {
        if let Some(&k) = self.order.first() {
            self.calls[k].bytes += bytes.len() as u64;
        }
        let had = self.endpoint.is_some();
        while let Some(item) = self.sse.next(&mut bytes) {
            self.ids.clear();
            self.ids
                .extend(self.order.iter().map(|&k| self.calls[k].id));
            let awaited = self.ids.len();
            self.ids.extend(self.stale.iter().flatten());
            // Each event's data borrows the parser; the answer's is copied only if kept.
            let data = match &item {
                Item::Event { data, .. } => Some(*data),
                _ => None,
            };
            let (said, place) = said_among(item, &self.ids);
            let settled = (&mut self.order, &mut self.calls[..], self.last_read);
            match said {
                Said::Nothing => {}
                Said::Endpoint(e) => {
                    if self.endpoint.is_none() {
                        self.endpoint = Some(String::from_utf8_lossy(e).into_owned());
                    }
                }
                // A late answer to a call that ended without it.
                Said::Answer(_) if place >= awaited => {}
                Said::Answer(a) => settle(settled, place, Ok(a), data),
                Said::Notice { progress } => {
                    if let Some(&k) = settled.0.first() {
                        settled.1[k].notifications += 1;
                        settled.1[k].progress += u32::from(progress);
                    }
                }
                // What answers no call, or breaks the protocol, is the oldest call's failure.
                Said::OtherId | Said::Fault(_) if awaited == 0 => {}
                Said::OtherId => settle(settled, 0, Err(OTHER_ID), None),
                Said::Fault(why) => settle(settled, 0, Err(why), None),
            }
        }
        if !had && self.endpoint.is_some() {
            self.wake();
        }
    }
}

/// The call awaited at `place` (in `order`, oldest first) settles with `verdict`, read at
/// `at`; `raw`: the answer's bytes, kept if the call asked.
fn settle(
    (order, calls, at): (&mut Vec<usize>, &mut [Call], Option<Tick>),
    place: usize,
    verdict: Result<Answer, &'static str>,
    raw: Option<&[u8]>,
) {
    let k = order.remove(place);
    let c = &mut calls[k];
    c.answer = Some(verdict);
    c.at = at;
    if let (Some(data), true) = (raw, c.keep) {
        c.raw.extend_from_slice(data);
    }
    if let Some(w) = c.waiter.take() {
        w.wake();
    }
}

/// What the stream's exchange tells the inbox: the receiver of the stream's GET, in any
/// protocol.
#[derive(Debug)]
pub struct Tap(pub(super) Rc<RefCell<Inbox>>);

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
            i.read(bytes);
        }
    }
}

/// The fuzz property: whatever a session's stream brings and however it is split, reading it
/// never panics, and what the call awaited hears does not depend on the split.
pub fn check_split(data: &[u8]) {
    let read = |cuts: &[usize]| {
        let mut i = Inbox::default();
        i.expect(0, 1, true);
        let mut from = 0;
        for &c in cuts.iter().chain(std::iter::once(&data.len())) {
            let c = c.clamp(from, data.len());
            i.read(&data[from..c]);
            from = c;
        }
        let c = &i.calls[0];
        (
            i.endpoint.clone(),
            c.answer.clone(),
            c.raw.clone(),
            c.notifications,
            c.progress,
        )
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
        i.expect(0, id, true);
        for c in chunks {
            i.read(c);
        }
        i
    }

    fn answer(id: u64) -> String {
        format!("data: {{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n\n")
    }

    fn cx() -> Context<'static> {
        Context::from_waker(Waker::noop())
    }

    #[test]
    fn the_stream_brings_the_endpoint_then_the_answer_at_every_split() {
        let stream: &[u8] = b"event: endpoint\r\ndata: /messages/?session_id=1\r\n\r\n: ping\r\n\r\n\
event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":7,\"progress\":1}}\r\n\r\n\
event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\r\n\r\n";
        for cut in 0..=stream.len() {
            let mut i = fed(&[&stream[..cut], &stream[cut..]], 7);
            assert_eq!(
                i.endpoint.as_deref(),
                Some("/messages/?session_id=1"),
                "{cut}"
            );
            assert!(i.raw(0).starts_with(b"{\"jsonrpc\""), "{cut}");
            let Poll::Ready(heard) = i.poll_answer(0, &mut cx()) else {
                panic!("{cut}: no answer");
            };
            assert_eq!(heard.verdict, Ok(Answer::Success), "{cut}");
            assert_eq!(heard.notifications, (1, 1), "{cut}");
            // The event ends at its blank line's "\r": a last "\n" read apart comes after.
            let n = stream.len() as u64;
            assert!((n - 1..=n).contains(&heard.bytes), "{cut}: {}", heard.bytes);
        }
    }

    #[test]
    fn another_id_or_bad_json_fails_the_call_awaited() {
        let mut other = fed(&[answer(3).as_bytes()], 4);
        let Poll::Ready(heard) = other.poll_answer(0, &mut cx()) else {
            panic!("the call waits on after another id");
        };
        assert_eq!(heard.verdict, Err(OTHER_ID));
        let mut bad = fed(&[b"data: {not json\n\n"], 4);
        assert!(matches!(
            bad.poll_answer(0, &mut cx()),
            Poll::Ready(Heard {
                verdict: Err(_),
                ..
            })
        ));
    }

    #[test]
    fn calls_of_several_slots_each_hear_their_own_answer_in_any_order() {
        let mut i = Inbox::default();
        for (k, id) in [(0, 10), (1, 20), (2, 30)] {
            i.expect(k, id, true);
        }
        let notice = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n";
        let stream = format!("{notice}{}{}{notice}", answer(30), answer(10));
        i.read(stream.as_bytes());
        let heard = |i: &mut Inbox, k| match i.poll_answer(k, &mut cx()) {
            Poll::Ready(h) => Some(h),
            Poll::Pending => None,
        };
        let (a, c) = (heard(&mut i, 0).unwrap(), heard(&mut i, 2).unwrap());
        assert_eq!(
            (a.verdict, c.verdict),
            (Ok(Answer::Success), Ok(Answer::Success))
        );
        assert!(i.raw(2).starts_with(br#"{"jsonrpc":"2.0","id":30"#));
        // The notifications and the bytes are the oldest call's, slot 0's, then slot 1's.
        assert_eq!(a.notifications, (1, 0));
        assert_eq!(a.bytes, stream.len() as u64);
        assert!(heard(&mut i, 1).is_none(), "slot 1's answer has not come");
        i.read(answer(20).as_bytes());
        assert_eq!(heard(&mut i, 1).unwrap().verdict, Ok(Answer::Success));
    }

    #[test]
    fn a_late_answer_to_a_call_that_ended_unanswered_is_for_no_one() {
        let mut i = Inbox::default();
        i.expect(0, 5, false);
        i.expect(1, 6, false);
        // Slot 0's call ended without its answer (a timeout) and it sends another.
        i.expect(0, 7, false);
        i.read(answer(5).as_bytes());
        assert!(i.poll_answer(0, &mut cx()).is_pending());
        assert!(i.poll_answer(1, &mut cx()).is_pending());
        // An id no call ever had fails the oldest call awaited, slot 1's.
        i.read(answer(99).as_bytes());
        let Poll::Ready(h) = i.poll_answer(1, &mut cx()) else {
            panic!("an unknown id is no one's answer");
        };
        assert_eq!(h.verdict, Err(OTHER_ID));
        i.read(answer(7).as_bytes());
        assert!(matches!(
            i.poll_answer(0, &mut cx()),
            Poll::Ready(Heard { verdict: Ok(_), .. })
        ));
    }

    #[test]
    fn a_stream_that_ends_ends_every_wait() {
        let mut i = Inbox::default();
        i.expect(0, 1, false);
        i.expect(1, 2, false);
        assert!(i.poll_answer(0, &mut cx()).is_pending());
        i.ended = Some("the session's event stream ended");
        for k in 0..2 {
            let Poll::Ready(heard) = i.poll_answer(k, &mut cx()) else {
                panic!("the wait goes on after the stream ended");
            };
            assert_eq!(heard.verdict, Err("the session's event stream ended"));
        }
    }
}
