//! An MCP server's answer to one POST, read as its body arrives: one JSON object, or an event
//! stream whose events carry notifications (and, from some servers, a priming event with no
//! data) before the response. Finds the response with the call's id and counts the rest. Memory
//! is bounded whatever a server sends. Must not know sockets or clocks.

use super::rpc::{self, Answer, Judged};
use crate::proto::Media;
use crate::proto::sse::{Item, Sse};

/// The longest JSON body kept to be judged; a longer one is a protocol failure.
pub const MAX_JSON: usize = 16 << 20;

/// What a response said of the call, once it ended.
pub type Verdict = Result<Answer, &'static str>;

/// Reads the answers of one connection's calls, one at a time.
#[derive(Debug, Default)]
pub struct Reader {
    id: u64,
    events: bool,
    json: Vec<u8>,
    json_over: bool,
    sse: Sse,
    answer: Option<Answer>,
    fault: Option<&'static str>,
    notifications: u32,
    progress: u32,
}

impl Reader {
    pub fn new() -> Reader {
        Reader::default()
    }

    /// A new call with id `id` is under way: forget the last.
    pub fn start(&mut self, id: u64) {
        self.id = id;
        self.events = false;
        self.json.clear();
        self.json_over = false;
        self.sse = Sse::new();
        self.answer = None;
        self.fault = None;
        self.notifications = 0;
        self.progress = 0;
    }

    /// The response's head said its body is of kind `media`.
    pub fn head(&mut self, media: Media) {
        self.events = media == Media::EventStream;
    }

    /// Payload of the body; true when these bytes brought the call's answer.
    pub fn data(&mut self, mut bytes: &[u8]) -> bool {
        if !self.events {
            let room = MAX_JSON.saturating_sub(self.json.len());
            if bytes.len() > room {
                self.json_over = true;
            }
            self.json.extend_from_slice(&bytes[..bytes.len().min(room)]);
            return false;
        }
        let had = self.answer.is_some();
        while let Some(item) = self.sse.next(&mut bytes) {
            match said(item, self.id) {
                // The legacy transport's endpoint event belongs on its GET's stream, not here.
                Said::Nothing | Said::Endpoint(_) => {}
                Said::Answer(a) => {
                    self.answer.get_or_insert(a);
                }
                Said::Notice { progress } => {
                    self.notifications += 1;
                    self.progress += u32::from(progress);
                }
                Said::OtherId => {
                    self.fault.get_or_insert(OTHER_ID);
                }
                Said::Fault(why) => {
                    self.fault.get_or_insert(why);
                }
            }
        }
        !had && self.answer.is_some()
    }

    /// The body ended: what it said of the call.
    pub fn finish(&mut self) -> Verdict {
        if self.events {
            if let Some(f) = self.fault {
                return Err(f);
            }
            return self
                .answer
                .take()
                .ok_or("the event stream ended without the response to the call");
        }
        if self.json_over {
            return Err("a JSON response longer than spate keeps (16 MiB)");
        }
        if self.json.trim_ascii().is_empty() {
            return Err("a response with no body where the call's answer belongs");
        }
        match rpc::judge(&self.json, self.id) {
            Judged::Answer(a) => Ok(a),
            Judged::OtherId => Err("the response answers another id"),
            Judged::Notification { .. } | Judged::ServerRequest => {
                Err("a JSON response that is not the call's answer")
            }
            Judged::Invalid(why) => Err(why),
        }
    }

    /// Notifications (and server requests) that came before the answer, and how many of them
    /// were progress notifications.
    pub fn notifications(&self) -> (u32, u32) {
        (self.notifications, self.progress)
    }
}

/// What one item of an MCP event stream says to the call with id `id`.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Said<'a> {
    /// Nothing for the call: a comment, a priming event (an id and no data), or an event type
    /// MCP does not use.
    Nothing,
    /// The legacy transport's `endpoint` event: where the session's POSTs go.
    Endpoint(&'a [u8]),
    /// The response to the call.
    Answer(Answer),
    /// A notification, or a request of the server (earlier revisions let a server ask the
    /// client things on the stream; a load test does not answer, and the server answers the
    /// call without); `progress`: a progress notification.
    Notice { progress: bool },
    /// A response to a call not awaited.
    OtherId,
    /// Not a valid message for the call: not JSON-RPC, longer than kept.
    Fault(&'static str),
}

/// What a call hears of a response to another id.
pub(super) const OTHER_ID: &str = "a response on the stream with another id";

/// Reads one item of an event stream (`proto::sse`) as the call with id `id` sees it.
pub(super) fn said(item: Item<'_>, id: u64) -> Said<'_> {
    said_among(item, &[id]).0
}

/// Reads one item of an event stream as the calls `ids` awaited at once (oldest first) see it:
/// what it says, and for an answer the place in `ids` of the call it answers (0 otherwise).
pub(super) fn said_among<'a>(item: Item<'a>, ids: &[u64]) -> (Said<'a>, usize) {
    let Item::Event {
        kind, data, cut, ..
    } = item
    else {
        return (Said::Nothing, 0);
    };
    if kind == b"endpoint" {
        return (Said::Endpoint(data), 0);
    }
    if !(kind.is_empty() || kind == b"message") || data.is_empty() {
        return (Said::Nothing, 0);
    }
    if cut {
        return (Said::Fault("an event longer than spate keeps (1 MiB)"), 0);
    }
    let (judged, at) = rpc::judge_among(data, ids);
    let said = match judged {
        Judged::Answer(a) => Said::Answer(a),
        Judged::Notification { progress } => Said::Notice { progress },
        Judged::ServerRequest => Said::Notice { progress: false },
        Judged::OtherId => Said::OtherId,
        Judged::Invalid(why) => Said::Fault(why),
    };
    (said, at)
}

/// The fuzz property: whatever the bytes and however they are split, reading them never panics,
/// and the verdict does not depend on the split.
pub fn check_split(data: &[u8], events: bool) {
    let read = |cuts: &[usize]| {
        let mut r = Reader::new();
        r.start(1);
        r.head(match events {
            true => Media::EventStream,
            false => Media::Other,
        });
        let mut at = 0;
        for &c in cuts.iter().chain([data.len()].iter()) {
            let c = c.clamp(at, data.len());
            r.data(&data[at..c]);
            at = c;
        }
        (r.finish(), r.notifications())
    };
    let whole = read(&[]);
    for cut in [1, data.len() / 3, data.len() / 2] {
        assert_eq!(read(&[cut, cut + 1]), whole);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_split(body: &[u8], events: bool) -> (Verdict, (u32, u32)) {
        let mut first = None;
        for cut in 0..=body.len() {
            let mut r = Reader::new();
            r.start(3);
            r.head(match events {
                true => Media::EventStream,
                false => Media::Other,
            });
            let found = r.data(&body[..cut]) | r.data(&body[cut..]);
            let got = (r.finish(), r.notifications());
            // A stream's answer is found as it arrives; a JSON body's only at its end.
            if events && got.0.is_ok() {
                assert!(found, "{cut}");
            }
            match &first {
                None => first = Some(got),
                Some(f) => assert_eq!(&got, f, "split at {cut}"),
            }
        }
        first.unwrap()
    }

    #[test]
    fn a_json_answer_is_judged_at_the_end_whatever_the_split() {
        let body = br#"{"jsonrpc":"2.0","id":3,"result":{"content":[],"isError":true}}"#;
        assert_eq!(every_split(body, false), (Ok(Answer::ToolError), (0, 0)));
        let other = br#"{"jsonrpc":"2.0","id":4,"result":{}}"#;
        assert!(every_split(other, false).0.is_err());
        assert!(every_split(b"", false).0.is_err());
    }

    #[test]
    fn an_event_stream_carries_priming_notifications_then_the_answer() {
        let body = b"id: 0\r\ndata:\r\n\r\n\
            : keep-alive\n\n\
            event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n\
            data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n\
            event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\n\
            data: \"result\":{\"content\":[]}}\n\n";
        assert_eq!(every_split(body, true), (Ok(Answer::Success), (2, 1)));
    }

    #[test]
    fn a_stream_without_the_answer_or_with_garbage_is_a_protocol_failure() {
        let none = b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n";
        assert_eq!(
            every_split(none, true).0,
            Err("the event stream ended without the response to the call")
        );
        let bad = b"data: {oops\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n";
        assert_eq!(every_split(bad, true).0, Err("a message that is not JSON"));
    }

    #[test]
    fn a_json_body_past_the_limit_is_refused_without_keeping_it() {
        let mut r = Reader::new();
        r.start(1);
        r.head(Media::Other);
        let chunk = vec![b' '; 1 << 20];
        for _ in 0..17 {
            r.data(&chunk);
        }
        assert!(r.json.len() <= MAX_JSON);
        assert!(r.finish().unwrap_err().contains("16 MiB"));
    }

    #[test]
    fn the_split_property_holds_for_samples() {
        check_split(
            b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
            true,
        );
        check_split(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", false);
        check_split(b"\xff\x00data\r\n\r", true);
    }

    #[test]
    fn each_kind_of_event_says_what_it_is_to_the_call() {
        let event = |kind: &'static [u8], data: &'static [u8], cut: bool| Item::Event {
            kind,
            data,
            data_len: data.len(),
            cut,
        };
        let answer = br#"{"jsonrpc":"2.0","id":7,"result":{}}"#;
        assert_eq!(said(Item::Comment, 7), Said::Nothing);
        assert_eq!(said(event(b"", b"", false), 7), Said::Nothing, "priming");
        assert_eq!(said(event(b"ping", answer, false), 7), Said::Nothing);
        assert_eq!(
            said(event(b"endpoint", b"/messages?s=1", false), 7),
            Said::Endpoint(b"/messages?s=1")
        );
        assert!(matches!(
            said(event(b"message", answer, false), 7),
            Said::Answer(_)
        ));
        assert!(
            matches!(said(event(b"", answer, true), 7), Said::Fault(_)),
            "cut"
        );
        assert_eq!(said(event(b"", answer, false), 8), Said::OtherId);
        // Among several calls, the answer says which it answers.
        let (a, at) = said_among(event(b"", answer, false), &[3, 7, 9]);
        assert!(matches!(a, Said::Answer(_)) && at == 1, "{a:?} {at}");
        let progress = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;
        assert_eq!(
            said(event(b"", progress, false), 7),
            Said::Notice { progress: true }
        );
    }
}
