//! Streamed responses measured as they arrive: an [`Events`] receiver that cuts a body into
//! units (server-sent events, lines, or what each read brought) and times them from the reads'
//! own timestamps: the first unit, the first unit with data (skipping empty ones, and with
//! OpenAI's chunks those without content), the gaps between data units, the end sentinel, the
//! output tokens a final usage object reports. It says what one response's stream did, hands
//! each gap to its caller as it happens, and knows nothing of the run's statistics or clock.

use std::borrow::Cow;
use std::rc::Rc;

use serde::Deserialize;

use super::Events;
use super::grpc::Frames;
use super::sse::{Item, MAX_LINE, Sse};
use crate::clock::Tick;

/// How a streamed body is cut into the units that are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// `text/event-stream`: each dispatched event; comments are keep-alives, counted apart.
    Sse,
    /// JSON lines (NDJSON): each line that is not empty.
    Lines,
    /// Whatever each read of the body brought, as one unit.
    Chunks,
    /// gRPC's Length-Prefixed-Messages: each message, once all of it has arrived. A body that
    /// is not their framing stops being cut (the call's own receiver judges it).
    Grpc,
}

/// What a stream must do, from the command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// The data of the event (or the line) that ends a stream as it should, such as
    /// `[DONE]`; it is not a unit itself. A stream that ends without it is cut short.
    pub done: Option<Vec<u8>>,
    /// OpenAI-compatible chunks: a unit has data only when a choice's `delta.content` (or
    /// `text`) is not empty, and the last `usage.completion_tokens` gives the output tokens.
    pub openai: bool,
    /// --max-events: the units after the first this many are not counted, nor anything else the
    /// response says after them (the reader stops at the end of the read that brought them,
    /// which may hold more).
    pub max_units: Option<u64>,
}

/// What one response's stream did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Facts {
    /// When the first unit arrived.
    pub first_unit: Option<Tick>,
    /// When the first unit with data arrived (the first token).
    pub first_data: Option<Tick>,
    /// When the last unit with data arrived.
    pub last_data: Option<Tick>,
    pub units: u64,
    pub data_units: u64,
    /// Comments (SSE keep-alives).
    pub keepalives: u64,
    /// Between consecutive data units: how many gaps, their sum and the longest, in ns.
    pub gaps: u64,
    pub gaps_ns: u64,
    pub longest_gap_ns: u64,
    /// The end sentinel arrived.
    pub done: bool,
    /// Output tokens as the stream's final usage object gave them.
    pub tokens: Option<u64>,
    /// A unit was longer than the parser keeps (its data was cut for the checks, not counted
    /// short).
    pub cut: bool,
}

impl Facts {
    /// The mean gap between data units, in ns.
    pub fn mean_gap_ns(&self) -> Option<u64> {
        (self.gaps > 0).then(|| self.gaps_ns / self.gaps)
    }
}

/// Measures one connection's responses, one after another: `finish` ends each. `G` is told
/// of each gap between data units (ns) as it happens.
#[derive(Debug)]
pub struct Meter<G> {
    unit: Unit,
    sse: Sse,
    /// Lines: the current line's start (at most `MAX_LINE` bytes) and whether it went on.
    line: Vec<u8>,
    line_cut: bool,
    /// Chunks: the read that was last counted as a unit.
    counted: Option<Tick>,
    grpc: Frames,
    timing: Timing<G>,
}

/// The part of a meter that times units, apart from the parsers that find them, so that a
/// unit is timed while the parser still holds its bytes.
#[derive(Debug)]
struct Timing<G> {
    rules: Rc<Rules>,
    /// The time of the read the bytes being told came in.
    at: Option<Tick>,
    facts: Facts,
    gap: G,
}

impl<G: FnMut(u64)> Meter<G> {
    pub fn new(unit: Unit, rules: Rc<Rules>, gap: G) -> Meter<G> {
        Meter {
            unit,
            sse: Sse::new(),
            line: Vec::new(),
            line_cut: false,
            counted: None,
            grpc: Frames::new(),
            timing: Timing {
                rules,
                at: None,
                facts: Facts::default(),
                gap,
            },
        }
    }

    /// What the response's stream did; the meter is ready for the next response. An event left
    /// unfinished by the end is not a unit (the event-stream standard discards it); a last line
    /// without its line break is (JSON-lines bodies often end so).
    pub fn finish(&mut self) -> Facts {
        if self.unit == Unit::Lines && (!self.line.is_empty() || self.line_cut) {
            self.timing.line(&self.line, self.line_cut);
        }
        self.sse = Sse::new();
        self.line.clear();
        self.line_cut = false;
        self.counted = None;
        self.grpc = Frames::new();
        self.timing.at = None;
        std::mem::take(&mut self.timing.facts)
    }

    /// Cuts the next response into `unit`s (known from its head).
    pub fn set_unit(&mut self, unit: Unit) {
        self.unit = unit;
    }

    /// What the stream did so far.
    pub fn facts(&self) -> &Facts {
        &self.timing.facts
    }

    fn lines(&mut self, mut bytes: &[u8]) {
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            let part = &bytes[..end];
            bytes = &bytes[end + 1..];
            if self.line.is_empty() && !self.line_cut {
                let kept = part.len().min(MAX_LINE);
                self.timing.line(&part[..kept], kept < part.len());
            } else {
                self.keep_line(part);
                self.timing.line(&self.line, self.line_cut);
                self.line.clear();
                self.line_cut = false;
            }
        }
        self.keep_line(bytes);
    }

    fn keep_line(&mut self, part: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.line.len());
        self.line_cut |= part.len() > room;
        self.line.extend_from_slice(&part[..part.len().min(room)]);
    }
}

impl<G: FnMut(u64)> Timing<G> {
    /// --max-events: the stream has had all the units it is measured by.
    fn capped(&self) -> bool {
        self.rules.max_units.is_some_and(|n| self.facts.units >= n)
    }

    /// A unit arrived; `data`: one with data.
    fn unit(&mut self, data: bool) {
        if self.capped() {
            return;
        }
        let Some(at) = self.at else { return };
        let f = &mut self.facts;
        f.units += 1;
        f.first_unit.get_or_insert(at);
        if !data {
            return;
        }
        f.data_units += 1;
        f.first_data.get_or_insert(at);
        if let Some(last) = f.last_data.replace(at) {
            let gap = at.nanos_since(last);
            f.gaps += 1;
            f.gaps_ns += gap;
            f.longest_gap_ns = f.longest_gap_ns.max(gap);
            (self.gap)(gap);
        }
    }

    /// An event's or a line's data: the sentinel, or a unit with or without data.
    fn payload(&mut self, data: &[u8], cut: bool) {
        if self.capped() {
            return;
        }
        self.facts.cut |= cut;
        if self.rules.done.as_deref() == Some(data) {
            self.facts.done = true;
            return;
        }
        let has_data = match self.rules.openai {
            true => {
                let chunk = openai(data);
                if let Some(t) = chunk.tokens {
                    self.facts.tokens = Some(t);
                }
                chunk.content
            }
            false => !data.is_empty(),
        };
        self.unit(has_data);
    }

    /// A whole line (its end of line removed); an empty one is no unit.
    fn line(&mut self, line: &[u8], cut: bool) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !line.is_empty() {
            self.payload(line, cut);
        }
    }
}

impl<G: FnMut(u64)> Events for Meter<G> {
    fn read_at(&mut self, at: Tick) {
        self.timing.at = Some(at);
    }

    fn data(&mut self, bytes: &[u8]) {
        match self.unit {
            Unit::Sse => {
                let mut input = bytes;
                while let Some(item) = self.sse.next(&mut input) {
                    match item {
                        Item::Comment if self.timing.capped() => {}
                        Item::Comment => self.timing.facts.keepalives += 1,
                        Item::Event { data, cut, .. } => self.timing.payload(data, cut),
                    }
                }
            }
            Unit::Lines => self.lines(bytes),
            Unit::Chunks => {
                if !bytes.is_empty() && self.counted != self.timing.at {
                    self.counted = self.timing.at;
                    self.timing.unit(true);
                }
            }
            Unit::Grpc => {
                let timing = &mut self.timing;
                // A refusal is the call's to count; the units before it stand.
                let _ = self.grpc.feed(bytes, |_| timing.unit(true));
            }
        }
    }
}

/// What an OpenAI-compatible chunk says: whether it carries content, and the output tokens
/// of its usage object.
#[derive(Debug, Default, PartialEq, Eq)]
struct Chunk {
    content: bool,
    tokens: Option<u64>,
}

#[derive(Deserialize)]
struct Wire<'a> {
    #[serde(default, borrow)]
    choices: Vec<Choice<'a>>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    completion_tokens: Option<u64>,
}

/// Reads one chunk; anything that is not one has no content (a server's own events, or a
/// malformed chunk, are not tokens).
fn openai(data: &[u8]) -> Chunk {
    let Ok(w) = serde_json::from_slice::<Wire<'_>>(data) else {
        return Chunk::default();
    };
    Chunk {
        content: w.choices.iter().any(|c| {
            c.delta
                .as_ref()
                .and_then(|d| d.content.as_deref())
                .or(c.text.as_deref())
                .is_some_and(|t| !t.is_empty())
        }),
        tokens: w.usage.and_then(|u| u.completion_tokens),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Feeds `reads` (ms after a start, bytes) and returns the facts and the gaps told.
    fn run(unit: Unit, rules: Rules, reads: &[(u64, &[u8])]) -> (Facts, Vec<u64>, Tick) {
        let t0 = Tick::now();
        let mut gaps = Vec::new();
        let facts = {
            let mut m = Meter::new(unit, Rc::new(rules), |g| gaps.push(g));
            for &(ms, bytes) in reads {
                m.read_at(t0.after(Duration::from_millis(ms)));
                // A read's payload may come in several runs (chunked framing): split it.
                let (a, b) = bytes.split_at(bytes.len() / 2);
                m.data(a);
                m.data(b);
            }
            m.finish()
        };
        (facts, gaps, t0)
    }

    const MS: u64 = 1_000_000;

    fn openai_chunk(content: &str) -> String {
        format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{content}\"}}}}]}}\n\n"
        )
    }

    #[test]
    fn an_openai_stream_times_its_first_token_and_the_gaps_between_tokens() {
        let role =
            "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
        let usage = "data: {\"choices\":[],\"usage\":{\"completion_tokens\":3}}\n\n";
        let (first, second, third) = (
            openai_chunk("Mock "),
            openai_chunk("response"),
            openai_chunk("."),
        );
        let tail = format!("{third}{usage}data: [DONE]\n\n");
        let reads: Vec<(u64, &[u8])> = vec![
            (200, role.as_bytes()),
            (201, b": keep-alive\n\n"),
            (220, first.as_bytes()),
            (240, second.as_bytes()),
            (290, tail.as_bytes()),
        ];
        let rules = Rules {
            done: Some(b"[DONE]".to_vec()),
            openai: true,
            ..Rules::default()
        };
        let (f, gaps, t0) = run(Unit::Sse, rules, &reads);
        assert_eq!(f.first_unit.map(|t| t.nanos_since(t0)), Some(200 * MS));
        assert_eq!(f.first_data.map(|t| t.nanos_since(t0)), Some(220 * MS));
        assert_eq!((f.units, f.data_units, f.keepalives), (5, 3, 1));
        assert_eq!(gaps, [20 * MS, 50 * MS]);
        assert_eq!((f.gaps, f.gaps_ns, f.longest_gap_ns), (2, 70 * MS, 50 * MS));
        assert_eq!(f.mean_gap_ns(), Some(35 * MS));
        assert!(f.done, "the sentinel came");
        assert_eq!(f.tokens, Some(3));
    }

    #[test]
    fn without_its_sentinel_a_stream_is_not_done_and_an_unfinished_event_is_no_unit() {
        let rules = Rules {
            done: Some(b"[DONE]".to_vec()),
            openai: false,
            ..Rules::default()
        };
        let (f, gaps, _) = run(
            Unit::Sse,
            rules,
            &[(5, b"data: a\n\ndata: b\n\n"), (9, b"data: c\n")],
        );
        assert!(!f.done);
        assert_eq!((f.units, f.data_units), (2, 2));
        assert_eq!(gaps, [0], "two events in one read arrived together");
    }

    #[test]
    fn max_events_counts_no_unit_past_the_cap_even_in_the_same_read() {
        let rules = Rules {
            done: Some(b"[DONE]".to_vec()),
            max_units: Some(5),
            ..Rules::default()
        };
        let events = "data: x\n\n".repeat(7) + ": ka\n\ndata: [DONE]\n\n";
        let (f, gaps, _) = run(Unit::Sse, rules, &[(5, events.as_bytes())]);
        assert_eq!((f.units, f.data_units, f.keepalives), (5, 5, 0));
        assert_eq!(gaps.len(), 4);
        assert!(!f.done, "the sentinel came after the cap");
    }

    #[test]
    fn lines_are_units_and_empty_lines_are_not() {
        let (f, gaps, t0) = run(
            Unit::Lines,
            Rules {
                done: Some(b"{\"done\":true}".to_vec()),
                openai: false,
                ..Rules::default()
            },
            &[
                (10, b"{\"t\":\"a\"}\r\n\n{\"t\""),
                (30, b":\"b\"}\n{\"done\":true}\n"),
            ],
        );
        assert_eq!(f.first_data.map(|t| t.nanos_since(t0)), Some(10 * MS));
        assert_eq!((f.units, f.data_units), (2, 2));
        assert_eq!(gaps, [20 * MS]);
        assert!(f.done);
    }

    #[test]
    fn a_last_line_without_its_line_break_is_a_unit() {
        let (f, gaps, _) = run(
            Unit::Lines,
            Rules::default(),
            &[(1, b"{\"a\":1}\n{\"b\""), (3, b":2}")],
        );
        assert_eq!((f.units, f.data_units), (2, 2));
        assert_eq!(gaps, [2 * MS]);
        // A line longer than kept, cut by the end, counts once and says it was cut.
        let long = vec![b'x'; MAX_LINE + 10];
        let (f, _, _) = run(Unit::Lines, Rules::default(), &[(1, &long)]);
        assert_eq!((f.units, f.cut), (1, true));
        let (f, _, _) = run(Unit::Lines, Rules::default(), &[(1, b"a\n")]);
        assert_eq!(f.units, 1, "no unit after the last line break");
    }

    #[test]
    fn chunks_count_each_read_once() {
        let (f, gaps, _) = run(
            Unit::Chunks,
            Rules::default(),
            &[(1, b"abc"), (4, b"de"), (4, b""), (10, b"f")],
        );
        assert_eq!((f.units, f.data_units), (3, 3));
        assert_eq!(gaps, [3 * MS, 6 * MS]);
    }

    #[test]
    fn grpc_messages_are_timed_when_their_last_byte_arrives() {
        let msg = |body: &[u8]| {
            let mut m = super::super::grpc::prefix(body.len() as u32).to_vec();
            m.extend_from_slice(body);
            m
        };
        let (a, b, c) = (msg(b"first"), msg(b""), msg(b"third one"));
        // The first message is cut over two reads; the second (empty) and the third share one.
        let second_read: Vec<u8> = [&a[4..], &b[..], &c[..]].concat();
        let (f, gaps, t0) = run(
            Unit::Grpc,
            Rules::default(),
            &[(1, &a[..4]), (5, &second_read), (9, &msg(b"x"))],
        );
        assert_eq!((f.units, f.data_units), (4, 4));
        assert_eq!(f.first_unit, Some(t0.after(Duration::from_millis(5))));
        assert_eq!(gaps, [0, 0, 4 * MS]);
        // --max-events counts messages too.
        let (f, _, _) = run(
            Unit::Grpc,
            Rules {
                max_units: Some(2),
                ..Rules::default()
            },
            &[(1, &[a.clone(), b.clone(), c.clone()].concat())],
        );
        assert_eq!(f.units, 2);
        // Past a body that is not gRPC's framing nothing more is counted.
        let (f, _, _) = run(
            Unit::Grpc,
            Rules::default(),
            &[(1, &a), (2, &[7, 0, 0, 0, 0]), (3, &c)],
        );
        assert_eq!(f.units, 1);
    }

    #[test]
    fn finish_starts_the_next_response_afresh() {
        let t0 = Tick::now();
        let mut m = Meter::new(Unit::Sse, Rc::new(Rules::default()), |_| {});
        m.read_at(t0);
        m.data(b"data: x\n\ndata: half");
        assert_eq!(m.finish().units, 1);
        m.read_at(t0.after(Duration::from_millis(5)));
        m.data(b"\n\ndata: y\n\n");
        let f = m.finish();
        assert_eq!(
            f.units, 1,
            "the half event of the last response is gone: {f:?}"
        );
        assert_eq!(f.first_unit, Some(t0.after(Duration::from_millis(5))));
    }

    #[test]
    fn openai_chunks_are_read_for_content_and_usage_only() {
        assert_eq!(
            openai(b"{\"choices\":[{\"text\":\"hi\"}]}"),
            Chunk {
                content: true,
                tokens: None
            }
        );
        assert_eq!(openai(b"not json"), Chunk::default());
        assert_eq!(
            openai(b"{\"choices\":[{\"delta\":{\"content\":null}}],\"usage\":{\"completion_tokens\":7,\"prompt_tokens\":1}}"),
            Chunk {
                content: false,
                tokens: Some(7)
            }
        );
    }

    #[test]
    fn facts_do_not_depend_on_how_the_body_was_cut() {
        let text = format!(
            "{}: ka\r\n\r\n{}data: {{\"choices\":[],\"usage\":{{\"completion_tokens\":2}}}}\r\rdata: [DONE]\n\n",
            openai_chunk("a"),
            openai_chunk("b")
        );
        let lines = "{\"a\":1}\r\n\n{\"b\":2}\n{\"c\":3}\ntrailing";
        for (unit, body, openai) in [
            (Unit::Sse, text.as_bytes(), true),
            (Unit::Sse, text.as_bytes(), false),
            (Unit::Lines, lines.as_bytes(), false),
        ] {
            let rules = Rc::new(Rules {
                done: Some(b"[DONE]".to_vec()),
                openai,
                ..Rules::default()
            });
            let t0 = Tick::now();
            let facts = |cuts: &[usize]| {
                let mut m = Meter::new(unit, rules.clone(), |_| {});
                m.read_at(t0);
                let mut from = 0;
                for &to in cuts.iter().chain([&body.len()]) {
                    m.data(&body[from..to]);
                    from = to;
                }
                m.finish()
            };
            let whole = facts(&[]);
            assert!(whole.units >= 2, "{unit:?}: {whole:?}");
            for cut in 0..=body.len() {
                assert_eq!(facts(&[cut]), whole, "{unit:?} cut at {cut}");
            }
            let bytes: Vec<usize> = (1..body.len()).collect();
            assert_eq!(facts(&bytes), whole, "{unit:?} a byte at a time");
        }
    }
}
