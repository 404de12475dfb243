//! Request lists: several URLs on the command line, or `--urls-from-file` (a request a line:
//! `URL`, or `METHOD URL [BODY]`), all on one origin, sent in turn or at random. Parsing and
//! the order only; the requests are built once before the run (`request`), and nothing here
//! runs per request except `Picker::pick`, which must stay a few instructions.

use std::fmt;

use crate::target::Target;

/// Requests told apart in the report; the rest are counted together as "other".
pub const MAX_TRACKED: usize = 32;

/// Lines a file may have.
pub const MAX_ENTRIES: usize = 100_000;

/// One request of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `None`: the run's method (`-m`).
    pub method: Option<String>,
    pub target: Target,
    /// `None`: the run's body (`-d`).
    pub body: Option<Vec<u8>>,
}

/// How the next request is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// One after another, from the first, on each load thread.
    #[default]
    RoundRobin,
    /// At random with this seed (each thread's sequence derived from it).
    Random(u64),
}

/// A request list: its entries, all on the origin of the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestList {
    pub entries: Vec<Entry>,
    pub order: Order,
    /// `spate mcp`: each request's own headers, its row in the report and the calls' weights.
    pub mcp: Option<std::sync::Arc<crate::calls::Prepared>>,
    /// Each entry's name in the report, in place of its method and URL (`spate grpc`'s
    /// messages, which share both); empty: none.
    pub labels: Vec<String>,
}

/// Why a list cannot be used; says where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListError(pub String);

impl fmt::Display for ListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl RequestList {
    /// The entry load thread 0 sends first (what `-v` shows).
    pub fn first(&self) -> usize {
        let mut p = match &self.mcp {
            Some(m) => Picker::scheduled(m.schedule.clone(), self.order, 0),
            None => Picker::new(self.entries.len(), self.order, 0),
        };
        p.pick()
    }

    /// A list of `entries`, checked: at least one, and every one on the first's origin (the
    /// connections are shared).
    pub fn new(entries: Vec<Entry>, order: Order) -> Result<RequestList, ListError> {
        let Some(first) = entries.first() else {
            return Err(ListError("the request list is empty".into()));
        };
        let origin = |t: &Target| (t.tls, t.host.clone(), t.port);
        if let Some(other) = entries
            .iter()
            .find(|e| origin(&e.target) != origin(&first.target))
        {
            return Err(ListError(format!(
                "{} is not on the origin of {} ({}://{}): the requests of a list share \
                 connections; for several servers use spate compare",
                crate::redact::url(&other.target.url),
                crate::redact::url(&first.target.url),
                first.target.scheme(),
                first.target.authority()
            )));
        }
        Ok(RequestList {
            entries,
            order,
            mcp: None,
            labels: Vec::new(),
        })
    }

    /// The list of `--urls-from-file`: a request a line, `URL` or `METHOD URL [BODY]` (the body
    /// is the rest of the line); blank lines and lines starting with `#` are skipped. `name`
    /// is the file's, for messages.
    pub fn parse(name: &str, text: &str, order: Order) -> Result<RequestList, ListError> {
        let mut entries = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if entries.len() == MAX_ENTRIES {
                return Err(ListError(format!(
                    "{name}: more than {MAX_ENTRIES} requests"
                )));
            }
            let at = |why: String| ListError(format!("{name}:{}: {why}", i + 1));
            let (first, rest) = split_word(line);
            let entry = match first.contains("://") {
                true if rest.is_empty() => Entry {
                    method: None,
                    target: Target::parse(first).map_err(|e| at(e.to_string()))?,
                    body: None,
                },
                true => return Err(at("a URL alone, or METHOD URL [BODY]".into())),
                false => {
                    let (url, body) = split_word(rest);
                    if !crate::syntax::is_token(first) {
                        return Err(at(format!("{first:?} is not a method")));
                    }
                    if url.is_empty() {
                        return Err(at("a method needs a URL after it".into()));
                    }
                    Entry {
                        method: Some(first.to_ascii_uppercase()),
                        target: Target::parse(url).map_err(|e| at(e.to_string()))?,
                        body: (!body.is_empty()).then(|| body.as_bytes().to_vec()),
                    }
                }
            };
            entries.push(entry);
        }
        RequestList::new(entries, order).map_err(|e| match e.0.starts_with("the request") {
            true => ListError(format!("{name}: no request in it")),
            false => ListError(format!("{name}: {e}")),
        })
    }
}

/// The fuzzed property (fuzz/fuzz_targets/urls.rs): any text either is refused with a line
/// that names the file, or is a list whose requests share the first one's origin, in the
/// order of their lines, with a method that is a token where one is given.
pub fn check_list(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match RequestList::parse("f", text, Order::RoundRobin) {
        Err(e) => assert!(e.0.starts_with("f"), "{e}"),
        Ok(l) => {
            let first = &l.entries[0].target;
            for e in &l.entries {
                assert_eq!(
                    (e.target.tls, &e.target.host, e.target.port),
                    (first.tls, &first.host, first.port)
                );
                assert!(e.method.as_deref().is_none_or(crate::syntax::is_token));
            }
            let lines = text
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.trim().starts_with('#'))
                .count();
            assert_eq!(l.entries.len(), lines);
        }
    }
}

/// The first word of `s` and what follows it, trimmed.
fn split_word(s: &str) -> (&str, &str) {
    match s.split_once(char::is_whitespace) {
        Some((a, b)) => (a, b.trim()),
        None => (s, ""),
    }
}

/// A load thread's choice of the next request.
#[derive(Debug, Clone)]
pub struct Picker {
    len: usize,
    next: usize,
    /// Random order: xorshift64* state.
    random: Option<u64>,
    /// Weighted calls: the order of places that gives each its share; the picker walks it.
    schedule: Option<std::sync::Arc<[u16]>>,
}

impl Picker {
    /// The picker of load thread `thread` for a list of `len` requests in `order`.
    pub fn new(len: usize, order: Order, thread: usize) -> Picker {
        Picker {
            len: len.max(1),
            next: 0,
            schedule: None,
            random: match order {
                Order::RoundRobin => None,
                // Never zero, and another sequence per thread.
                Order::Random(seed) => Some(
                    (seed
                        ^ (thread as u64)
                            .wrapping_add(1)
                            .wrapping_mul(0x9E37_79B9_7F4A_7C15))
                    .max(1),
                ),
            },
        }
    }

    /// As [`Picker::new`], walking `schedule` (places of the list, each as often as its
    /// weight) in `order` instead of the list itself.
    pub fn scheduled(schedule: std::sync::Arc<[u16]>, order: Order, thread: usize) -> Picker {
        Picker {
            schedule: Some(schedule.clone()),
            ..Picker::new(schedule.len(), order, thread)
        }
    }

    /// The index of the next request.
    #[inline]
    pub fn pick(&mut self) -> usize {
        let i = self.step();
        match &self.schedule {
            None => i,
            Some(s) => usize::from(s[i]),
        }
    }

    #[inline]
    fn step(&mut self) -> usize {
        match &mut self.random {
            None => {
                let i = self.next;
                self.next = if i + 1 == self.len { 0 } else { i + 1 };
                i
            }
            Some(x) => {
                *x ^= *x >> 12;
                *x ^= *x << 25;
                *x ^= *x >> 27;
                let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
                // Multiply-shift: unbiased enough for a list, and no division.
                ((u128::from(r) * self.len as u128) >> 64) as usize
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(url: &str) -> Target {
        Target::parse(url).unwrap()
    }

    #[test]
    fn a_file_has_urls_or_methods_urls_and_bodies() {
        let text = "# comment\n\nhttp://h/a\n  POST http://h/b a=1 b=2\ndelete http://h/c\n";
        let l = RequestList::parse("f", text, Order::RoundRobin).unwrap();
        assert_eq!(
            l.entries,
            [
                Entry {
                    method: None,
                    target: target("http://h/a"),
                    body: None
                },
                Entry {
                    method: Some("POST".into()),
                    target: target("http://h/b"),
                    body: Some(b"a=1 b=2".to_vec())
                },
                Entry {
                    method: Some("DELETE".into()),
                    target: target("http://h/c"),
                    body: None
                },
            ]
        );
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        for (text, want) in [
            ("http://h/a\nhttp://h/b extra\n", "f:2: a URL alone"),
            (
                "http://h/a\nGE:T http://h/b\n",
                "f:2: \"GE:T\" is not a method",
            ),
            ("POST\n", "f:1: a method needs a URL"),
            (
                "http://h/a\nhttp://other/b\n",
                "f: http://other/b is not on the origin",
            ),
            ("https://h/a\nhttp://h/b\n", "is not on the origin"),
            ("# nothing\n\n", "f: no request in it"),
            ("ftp://h/a\n", "f:1: unsupported scheme"),
        ] {
            let e = RequestList::parse("f", text, Order::RoundRobin).unwrap_err();
            assert!(e.0.contains(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn the_fuzzed_property_holds_for_lists_and_junk() {
        for text in [
            "http://h/a\nPOST http://h/b x\n# c\n",
            "",
            "\n\n#\n",
            "http://h/a http://h/b",
            "GET",
            "get http://h:99999/",
            "http://[::1]:8/a\nhttp://[::1]:8/b",
        ] {
            check_list(text.as_bytes());
        }
    }

    #[test]
    fn round_robin_goes_in_turn_and_random_repeats_with_its_seed() {
        let mut p = Picker::new(3, Order::RoundRobin, 5);
        let got: Vec<usize> = (0..7).map(|_| p.pick()).collect();
        assert_eq!(got, [0, 1, 2, 0, 1, 2, 0]);
        let seq = |seed, thread| {
            let mut p = Picker::new(10, Order::Random(seed), thread);
            (0..1000).map(|_| p.pick()).collect::<Vec<usize>>()
        };
        assert_eq!(seq(7, 0), seq(7, 0));
        assert_ne!(seq(7, 0), seq(8, 0));
        assert_ne!(seq(7, 0), seq(7, 1));
        let s = seq(7, 0);
        for k in 0..10 {
            let n = s.iter().filter(|&&i| i == k).count();
            assert!((60..=140).contains(&n), "{k}: {n}");
        }
        // A seed of zero still moves.
        assert_ne!(seq(0, usize::MAX)[..10], [0; 10]);
    }

    #[test]
    fn a_schedule_gives_places_their_shares() {
        let s: std::sync::Arc<[u16]> = vec![0, 0, 1, 0].into();
        let mut p = Picker::scheduled(s.clone(), Order::RoundRobin, 0);
        let got: Vec<usize> = (0..8).map(|_| p.pick()).collect();
        assert_eq!(got, [0, 0, 1, 0, 0, 0, 1, 0]);
        let mut p = Picker::scheduled(s, Order::Random(3), 0);
        let ones = (0..4000).filter(|_| p.pick() == 1).count();
        assert!((800..1200).contains(&ones), "{ones}");
    }
}
