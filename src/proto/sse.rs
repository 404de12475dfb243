//! Sans-IO parser of a `text/event-stream` body (the WHATWG HTML standard's event-stream
//! interpretation): lines end in CR LF, LF or CR; `field: value` lines build an event; a blank
//! line dispatches it; several `data` lines join with LF; a line starting with ':' is a comment
//! (servers send them as keep-alives); an event with no data is not dispatched. Events may span
//! reads and a read may hold many. Memory is bounded whatever a server sends: a line or an
//! event's data longer than the limits is cut (and said to be), never buffered whole. Must not
//! know sockets, clocks or what the events mean.

/// The longest line kept; a longer one is cut here (its field name is in the first bytes).
pub const MAX_LINE: usize = 64 << 10;

/// The most data of one event kept for the reader (the `[DONE]` sentinel, a final usage
/// object); its full length is counted however long.
pub const MAX_DATA: usize = 1 << 20;

/// What the parser found in the bytes given so far.
#[derive(Debug, PartialEq, Eq)]
pub enum Item<'a> {
    /// A dispatched event: its type (empty when the event set none, which means "message"),
    /// its data (the `data` lines joined with LF; at most `MAX_DATA` bytes kept) and the
    /// data's full length.
    Event {
        kind: &'a [u8],
        data: &'a [u8],
        data_len: usize,
        /// The data, or the line of a field, was longer than kept.
        cut: bool,
    },
    /// A comment line (":" and anything after it).
    Comment,
}

/// The parser's state between reads.
#[derive(Debug, Default)]
pub struct Sse {
    /// The start of a line whose end has not arrived (at most `MAX_LINE` bytes).
    line: Vec<u8>,
    /// Bytes of that line beyond `MAX_LINE`, skipped.
    dropped: usize,
    /// The last byte seen was a CR: a LF right after it ends nothing more.
    after_cr: bool,
    /// Nothing was read yet: a byte order mark may come first.
    started: bool,
    data: Vec<u8>,
    data_len: usize,
    /// At least one `data` field in the event being built.
    has_data: bool,
    kind: Vec<u8>,
    cut: bool,
    /// The last item returned borrows the buffers: clear them before the next.
    dispatched: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl Sse {
    pub fn new() -> Sse {
        Sse::default()
    }

    /// The next item in `input`, consuming what it read from it; `None` once `input` is used
    /// up without completing one (the rest is kept for the next call).
    pub fn next<'s>(&'s mut self, input: &mut &[u8]) -> Option<Item<'s>> {
        if self.dispatched {
            self.dispatched = false;
            self.data.clear();
            self.data_len = 0;
            self.has_data = false;
            self.kind.clear();
            self.cut = false;
        }
        loop {
            if !self.started {
                // The mark may arrive a byte at a time: wait until it can be told apart.
                let n = input.len().min(BOM.len() - self.line.len());
                let seen = [&self.line[..], &input[..n]].concat();
                if BOM.starts_with(&seen) && seen.len() < BOM.len() {
                    self.line.extend_from_slice(&input[..n]);
                    *input = &input[n..];
                    return None;
                }
                self.started = true;
                if seen == BOM {
                    *input = &input[n..];
                    self.line.clear();
                }
            }
            if self.after_cr {
                let (&first, rest) = input.split_first()?;
                self.after_cr = false;
                if first == b'\n' {
                    *input = rest;
                }
            }
            let Some(end) = input.iter().position(|&b| b == b'\n' || b == b'\r') else {
                self.keep(input);
                *input = &[];
                return None;
            };
            self.after_cr = input[end] == b'\r';
            let rest = &input[end + 1..];
            let step = if self.line.is_empty() && self.dropped == 0 {
                // The whole line is in this read: read it where it is.
                let kept = end.min(MAX_LINE);
                let step = self.line_done(&input[..kept], end - kept);
                *input = rest;
                step
            } else {
                self.keep(&input[..end]);
                *input = rest;
                // The line is the kept start: take it out to read it, and keep the buffer.
                let whole = std::mem::take(&mut self.line);
                let step = self.line_done(&whole, self.dropped);
                self.line = whole;
                self.line.clear();
                self.dropped = 0;
                step
            };
            match step {
                Some(Step::Comment) => return Some(Item::Comment),
                Some(Step::Dispatch) => return Some(self.event()),
                None => {}
            }
        }
    }

    /// Keeps the start of a line, up to `MAX_LINE`, and counts the rest.
    fn keep(&mut self, part: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.line.len());
        let kept = part.len().min(room);
        self.dropped += part.len() - kept;
        self.line.extend_from_slice(&part[..kept]);
    }

    /// Interprets one whole line, of which `dropped` bytes beyond `MAX_LINE` were not kept.
    fn line_done(&mut self, line: &[u8], dropped: usize) -> Option<Step> {
        if line.is_empty() {
            if !self.has_data {
                // No data: nothing is dispatched, and the event's type is forgotten.
                self.kind.clear();
                self.cut = false;
                return None;
            }
            return Some(Step::Dispatch);
        }
        if line[0] == b':' {
            return Some(Step::Comment);
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.push_data(b"\n");
                }
                self.has_data = true;
                self.push_data(value);
                self.data_len += dropped;
                self.cut |= dropped > 0;
            }
            b"event" => {
                self.kind.clear();
                self.kind.extend_from_slice(value);
                self.cut |= dropped > 0;
            }
            // id and retry matter to a reconnecting browser, not to a measurement; other
            // fields are ignored, as the standard says.
            _ => {}
        }
        None
    }

    fn push_data(&mut self, bytes: &[u8]) {
        self.data_len += bytes.len();
        let room = MAX_DATA.saturating_sub(self.data.len());
        if bytes.len() > room {
            self.cut = true;
        }
        self.data.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn event(&mut self) -> Item<'_> {
        self.dispatched = true;
        Item::Event {
            kind: &self.kind,
            data: &self.data,
            data_len: self.data_len,
            cut: self.cut,
        }
    }
}

enum Step {
    Comment,
    Dispatch,
}

/// Every item of `data` read in pieces cut at `cuts`, as owned values: for tests and the fuzz
/// target's split property.
pub fn parse_all(data: &[u8], cuts: &[usize]) -> Vec<Owned> {
    let mut sse = Sse::new();
    let mut out = Vec::new();
    let mut from = 0;
    for &to in cuts.iter().chain(std::iter::once(&data.len())) {
        let mut input = &data[from..to.clamp(from, data.len())];
        from = to.clamp(from, data.len());
        while let Some(item) = sse.next(&mut input) {
            out.push(Owned::from(item));
        }
    }
    out
}

/// An item with its bytes copied out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owned {
    Event {
        kind: Vec<u8>,
        data: Vec<u8>,
        data_len: usize,
        cut: bool,
    },
    Comment,
}

impl From<Item<'_>> for Owned {
    fn from(i: Item<'_>) -> Owned {
        match i {
            Item::Event {
                kind,
                data,
                data_len,
                cut,
            } => Owned::Event {
                kind: kind.to_vec(),
                data: data.to_vec(),
                data_len,
                cut,
            },
            Item::Comment => Owned::Comment,
        }
    }
}

/// The fuzz target's property: however `data` is cut into reads (cut points drawn from
/// `seed`), the items are those of reading it whole, and no event keeps more than the limits.
pub fn check_split(data: &[u8], seed: u64) {
    let whole = parse_all(data, &[]);
    let cuts = super::h1::props::splits(data.len(), seed, 16);
    assert_eq!(parse_all(data, &cuts), whole, "cuts {cuts:?}");
    for item in &whole {
        if let Owned::Event {
            kind,
            data: d,
            data_len,
            ..
        } = item
        {
            assert!(d.len() <= MAX_DATA && d.len() <= *data_len && kind.len() <= MAX_LINE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(kind: &str, data: &str) -> Owned {
        Owned::Event {
            kind: kind.as_bytes().to_vec(),
            data: data.as_bytes().to_vec(),
            data_len: data.len(),
            cut: false,
        }
    }

    /// Every way of cutting `text` in two, and byte by byte, gives `expected`.
    fn at_every_split(text: &[u8], expected: &[Owned]) {
        assert_eq!(parse_all(text, &[]), expected, "whole");
        for cut in 0..=text.len() {
            assert_eq!(parse_all(text, &[cut]), expected, "cut at {cut}");
        }
        let bytes: Vec<usize> = (1..text.len()).collect();
        assert_eq!(parse_all(text, &bytes), expected, "a byte at a time");
    }

    #[test]
    fn events_end_at_a_blank_line_and_data_lines_join() {
        at_every_split(
            b"data: one\n\ndata: two\ndata:three\n\nevent: done\ndata: [DONE]\n\n",
            &[ev("", "one"), ev("", "two\nthree"), ev("done", "[DONE]")],
        );
    }

    #[test]
    fn every_line_ending_counts_and_cr_lf_is_one() {
        at_every_split(
            b"data: a\r\n\r\ndata: b\r\rdata: c\n\rdata: d\r\n\n",
            &[ev("", "a"), ev("", "b"), ev("", "c"), ev("", "d")],
        );
    }

    #[test]
    fn comments_are_items_and_events_without_data_are_not() {
        at_every_split(
            b": keep-alive\n\nevent: ping\n\nid: 7\nretry: 10\n\ndata\n\ndata:\n\n",
            &[Owned::Comment, ev("", ""), ev("", "")],
        );
    }

    #[test]
    fn one_space_after_the_colon_is_dropped_and_no_more() {
        at_every_split(
            b"data:  two spaces\nfoo: ignored\ndata\n\n",
            &[ev("", " two spaces\n")],
        );
    }

    #[test]
    fn a_byte_order_mark_is_skipped_only_at_the_start() {
        at_every_split(b"\xEF\xBB\xBFdata: x\n\n", &[ev("", "x")]);
        at_every_split(b"\xEF\xBBdata: x\n\n", &[]);
        let late = b"data: x\n\n\xEF\xBB\xBFdata: y\n\n";
        assert_eq!(
            parse_all(late, &[]),
            [ev("", "x")],
            "a late mark is a field name"
        );
    }

    #[test]
    fn an_unfinished_event_at_the_end_is_not_dispatched() {
        at_every_split(b"data: a\n\ndata: b\n", &[ev("", "a")]);
    }

    #[test]
    fn a_line_longer_than_kept_is_cut_and_said_to_be() {
        let mut text = b"data: ".to_vec();
        text.extend(std::iter::repeat_n(b'x', MAX_LINE + 100));
        text.extend_from_slice(b"\n\ndata: next\n\n");
        let got = parse_all(&text, &[10, 70_000]);
        assert_eq!(got.len(), 2);
        let Owned::Event { data, cut, .. } = &got[0] else {
            panic!("{got:?}")
        };
        assert!(*cut && data.len() == MAX_LINE - 6, "{}", data.len());
        assert_eq!(got[1], ev("", "next"), "the next event is whole");
        assert_eq!(parse_all(&text, &[]), got);
    }

    #[test]
    fn data_longer_than_kept_is_counted_in_full() {
        let line = format!("data: {}\n", "y".repeat(60_000));
        let text = line.repeat(20) + "\n";
        let got = parse_all(text.as_bytes(), &[]);
        let Owned::Event {
            data,
            data_len,
            cut,
            ..
        } = &got[0]
        else {
            panic!()
        };
        assert_eq!(*data_len, 20 * 60_000 + 19);
        assert_eq!(data.len(), MAX_DATA);
        assert!(*cut);
    }

    #[test]
    fn the_split_property_holds_on_odd_input() {
        for (i, text) in [
            &b"\r\r\n\n\r"[..],
            b"data:\rdata:\n\r\n",
            b"\xEF\xBB\xBF\xEF\xBB\xBF\n",
            b":\n:\r\n\ndata: x\r",
            b"event:\xff\xfe\ndata:\0\n\n",
        ]
        .into_iter()
        .enumerate()
        {
            for seed in 0..50 {
                check_split(text, seed * 7919 + i as u64);
            }
        }
    }
}
