//! HPACK (RFC 7541) for a client: the decoder with its dynamic table (entries in one byte
//! arena, so that a server indexing a field in every response costs no allocation), and the
//! encoding of spate's one request, done once per connection: the first block indexes the
//! request's fields in the server's table, later ones refer to them. Must not allocate per
//! header once the arena has grown, nor encode per request.

use std::collections::VecDeque;

use super::huffman;

/// What is wrong with a header block; all of them are connection errors (COMPRESSION_ERROR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HpackError {
    #[error("a header block ends inside a field")]
    Truncated,
    #[error("an integer in a header block is too large")]
    Integer,
    #[error("a header block refers to index {0}, which does not exist")]
    Index(usize),
    #[error("a Huffman-coded string is malformed")]
    Huffman,
    #[error("a dynamic table size update above the limit or after a field")]
    TableSize,
}

/// The static table (RFC 7541, Appendix A); entry `i` is index `i + 1`.
const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// The dynamic table size we allow (SETTINGS_HEADER_TABLE_SIZE, left at its default).
pub const TABLE_SIZE: usize = 4096;

/// Per-entry overhead in the table's size (RFC 7541, 4.1).
const ENTRY_OVERHEAD: usize = 32;

/// A dynamic table entry: where its name and value lie in `Decoder::bytes`.
#[derive(Debug, Clone, Copy)]
struct Entry {
    start: usize,
    name: usize,
    value: usize,
}

/// How many bytes the arena may hold before it is compacted: live entries take at most
/// `TABLE_SIZE`, and evicted ones stay until then, so a compaction copies at most half of what
/// was inserted since the last one.
const ARENA: usize = 2 * TABLE_SIZE;

/// The HPACK decoding state of one connection. Entries live in one byte arena, appended as they
/// are inserted and compacted now and then, so that a server that indexes a field in every
/// response (nginx does, for `date` and `server`) costs no allocation.
#[derive(Debug)]
pub struct Decoder {
    /// Newest first: dynamic index 62 is `table[0]`.
    table: VecDeque<Entry>,
    bytes: Vec<u8>,
    size: usize,
    max: usize,
    /// Huffman-decoded strings of the field being read.
    scratch: Vec<u8>,
    /// The entry being inserted: name then value.
    stage: Vec<u8>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            table: VecDeque::new(),
            bytes: Vec::new(),
            size: 0,
            max: TABLE_SIZE,
            scratch: Vec::new(),
            stage: Vec::new(),
        }
    }
}

/// Where a decoded string is: in the block itself or in the scratch buffer.
#[derive(Clone, Copy)]
enum Str {
    Block(usize, usize),
    Scratch(usize, usize),
}

/// How a field names its header.
enum Name {
    Index(usize),
    Literal(Str),
}

impl Decoder {
    /// Decodes one complete header block, calling `field(name, value)` for each field in order.
    pub fn decode(
        &mut self,
        block: &[u8],
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let mut at = 0;
        let mut fields = 0usize;
        while at < block.len() {
            let b = block[at];
            if b & 0x80 != 0 {
                let index = integer(block, &mut at, 7)?;
                let (name, value) = self.entry(index)?;
                field(name, value);
            } else if b & 0xe0 == 0x20 {
                let size = integer(block, &mut at, 5)?;
                if fields > 0 || size > TABLE_SIZE {
                    return Err(HpackError::TableSize);
                }
                self.max = size;
                self.evict(0);
                continue;
            } else {
                // 01: with incremental indexing (6-bit index); 0000 / 0001: without indexing or
                // never indexed (4-bit index).
                let indexed = b & 0xc0 == 0x40;
                let index = integer(block, &mut at, if indexed { 6 } else { 4 })?;
                self.scratch.clear();
                let name = if index == 0 {
                    Name::Literal(self.string(block, &mut at)?)
                } else {
                    self.entry(index)?;
                    Name::Index(index)
                };
                let value = self.string(block, &mut at)?;
                if indexed {
                    // Staged first: the name may be an entry that this insertion evicts.
                    let mut stage = std::mem::take(&mut self.stage);
                    stage.clear();
                    match name {
                        Name::Index(i) => stage.extend_from_slice(self.entry(i)?.0),
                        Name::Literal(s) => stage.extend_from_slice(self.resolve(block, s)),
                    }
                    let name_len = stage.len();
                    stage.extend_from_slice(self.resolve(block, value));
                    field(&stage[..name_len], &stage[name_len..]);
                    self.insert(&stage, name_len);
                    self.stage = stage;
                } else {
                    let name = match name {
                        Name::Index(i) => self.entry(i)?.0,
                        Name::Literal(s) => self.resolve(block, s),
                    };
                    field(name, self.resolve(block, value));
                }
            }
            fields += 1;
        }
        Ok(())
    }

    fn entry(&self, index: usize) -> Result<(&[u8], &[u8]), HpackError> {
        match index {
            1..=61 => {
                let (n, v) = STATIC[index - 1];
                Ok((n.as_bytes(), v.as_bytes()))
            }
            _ => index
                .checked_sub(62)
                .and_then(|i| self.table.get(i))
                .map(|e| {
                    let name_end = e.start + e.name;
                    (
                        &self.bytes[e.start..name_end],
                        &self.bytes[name_end..name_end + e.value],
                    )
                })
                .ok_or(HpackError::Index(index)),
        }
    }

    /// Reads a string literal; a Huffman-coded one is decoded into the scratch buffer.
    fn string(&mut self, block: &[u8], at: &mut usize) -> Result<Str, HpackError> {
        let huffman = block.get(*at).ok_or(HpackError::Truncated)? & 0x80 != 0;
        let len = integer(block, at, 7)?;
        let end = at.checked_add(len).ok_or(HpackError::Truncated)?;
        let raw = block.get(*at..end).ok_or(HpackError::Truncated)?;
        *at = end;
        if !huffman {
            return Ok(Str::Block(end - len, end));
        }
        let start = self.scratch.len();
        huffman::decode(raw, &mut self.scratch)?;
        Ok(Str::Scratch(start, self.scratch.len()))
    }

    fn resolve<'a>(&'a self, block: &'a [u8], s: Str) -> &'a [u8] {
        match s {
            Str::Block(a, b) => &block[a..b],
            Str::Scratch(a, b) => &self.scratch[a..b],
        }
    }

    /// Inserts `entry` (the name is its first `name` bytes) as the newest entry.
    fn insert(&mut self, entry: &[u8], name: usize) {
        let size = entry.len() + ENTRY_OVERHEAD;
        if size > self.max {
            // An entry larger than the table empties it and is not added (RFC 7541, 4.4).
            self.table.clear();
            self.bytes.clear();
            self.size = 0;
            return;
        }
        self.evict(size);
        if self.bytes.len() + entry.len() > ARENA {
            self.compact();
        }
        let need = self.bytes.len() + entry.len();
        if need > self.bytes.capacity() {
            // Grown by hand, so that it never holds more than `ARENA`.
            let to = need.max(self.bytes.capacity() * 2).min(ARENA);
            self.bytes.reserve_exact(to - self.bytes.len());
        }
        self.table.push_front(Entry {
            start: self.bytes.len(),
            name,
            value: entry.len() - name,
        });
        self.bytes.extend_from_slice(entry);
        self.size += size;
    }

    /// Moves the live entries to the front of the arena, oldest first, dropping evicted bytes.
    fn compact(&mut self) {
        let mut to = 0;
        for e in self.table.iter_mut().rev() {
            let len = e.name + e.value;
            self.bytes.copy_within(e.start..e.start + len, to);
            e.start = to;
            to += len;
        }
        self.bytes.truncate(to);
    }

    /// Evicts the oldest entries until `room` more bytes fit.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max {
            let Some(e) = self.table.pop_back() else {
                break;
            };
            self.size -= e.name + e.value + ENTRY_OVERHEAD;
        }
        if self.table.is_empty() {
            self.bytes.clear();
        }
    }
}

/// Reads an integer with an `n`-bit prefix (RFC 7541, 5.1); values above 2^28 are refused.
fn integer(block: &[u8], at: &mut usize, n: u32) -> Result<usize, HpackError> {
    let max_prefix = (1usize << n) - 1;
    let first = *block.get(*at).ok_or(HpackError::Truncated)?;
    *at += 1;
    let mut value = usize::from(first) & max_prefix;
    if value < max_prefix {
        return Ok(value);
    }
    let mut shift = 0;
    loop {
        let b = *block.get(*at).ok_or(HpackError::Truncated)?;
        *at += 1;
        if shift > 21 {
            return Err(HpackError::Integer);
        }
        value += usize::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
}

fn put_integer(out: &mut Vec<u8>, first: u8, n: u32, mut value: usize) {
    let max_prefix = (1usize << n) - 1;
    if value < max_prefix {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max_prefix as u8);
    value -= max_prefix;
    while value >= 0x80 {
        out.push((value & 0x7f) as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    put_integer(out, 0, 7, s.len());
    out.extend_from_slice(s);
}

/// Encodes a request's fields (pseudo-headers first, names in lower case) as one header block
/// that leaves the server's dynamic table alone: static-table references where name and value
/// match, otherwise literals without indexing.
pub fn encode(fields: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(name, value) in fields {
        match static_index(name, value) {
            (Some(i), _) => put_integer(&mut out, 0x80, 7, i),
            (None, by_name) => put_literal(&mut out, 0x00, 4, by_name, name, value),
        }
    }
    out
}

/// A dynamic table size update to `size`, as the start of a header block.
pub fn size_update(size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(4);
    put_integer(&mut out, 0x20, 5, size);
    out
}

/// The two blocks of a request sent many times on one connection: the first inserts the
/// fields into the server's dynamic table (as many as fit in `capacity` bytes), and every later
/// one refers to them by index, one or two bytes a field. `size_update` starts the first block
/// with a dynamic table size update (a server that allows less than the default 4,096 bytes
/// expects one). Fields that do not fit stay plain literals in both.
pub fn encode_indexed(
    fields: &[(&[u8], &[u8])],
    capacity: usize,
    size_update: Option<usize>,
) -> (Vec<u8>, Vec<u8>) {
    let mut used = 0;
    let indexed: Vec<bool> = fields
        .iter()
        .map(|&(name, value)| {
            let size = name.len() + value.len() + ENTRY_OVERHEAD;
            let fits = static_index(name, value).0.is_none() && used + size <= capacity;
            used += if fits { size } else { 0 };
            fits
        })
        .collect();
    let total = indexed.iter().filter(|&&i| i).count();
    let (mut first, mut rest) = (Vec::new(), Vec::new());
    if let Some(size) = size_update {
        first = self::size_update(size);
    }
    let mut inserted = 0;
    for (&(name, value), &index) in fields.iter().zip(&indexed) {
        let (exact, by_name) = static_index(name, value);
        if let Some(i) = exact {
            put_integer(&mut first, 0x80, 7, i);
            put_integer(&mut rest, 0x80, 7, i);
        } else if index {
            put_literal(&mut first, 0x40, 6, by_name, name, value);
            // The newest entry is index 62; this one will have `total - 1 - inserted` after it.
            put_integer(&mut rest, 0x80, 7, 62 + total - 1 - inserted);
            inserted += 1;
        } else {
            put_literal(&mut first, 0x00, 4, by_name, name, value);
            put_literal(&mut rest, 0x00, 4, by_name, name, value);
        }
    }
    (first, rest)
}

/// The static index of the exact field, and of its name.
fn static_index(name: &[u8], value: &[u8]) -> (Option<usize>, Option<usize>) {
    let exact = STATIC
        .iter()
        .position(|(n, v)| n.as_bytes() == name && v.as_bytes() == value);
    let by_name = STATIC.iter().position(|(n, _)| n.as_bytes() == name);
    (exact.map(|i| i + 1), by_name.map(|i| i + 1))
}

/// A literal field: `first` and an `n`-bit prefix carry the name's static index (or 0 and the
/// name as a string), then the value, both without Huffman coding.
fn put_literal(
    out: &mut Vec<u8>,
    first: u8,
    n: u32,
    name_index: Option<usize>,
    name: &[u8],
    value: &[u8],
) {
    match name_index {
        Some(i) => put_integer(out, first, n, i),
        None => {
            out.push(first);
            put_string(out, name);
        }
    }
    put_string(out, value);
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Bytes from hex digits, spaces and line breaks ignored (the RFC's examples).
    pub(crate) fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn fields(d: &mut Decoder, block: &[u8]) -> Result<Vec<(String, String)>, HpackError> {
        let mut out = Vec::new();
        d.decode(block, |n, v| {
            out.push((
                String::from_utf8(n.to_vec()).unwrap(),
                String::from_utf8(v.to_vec()).unwrap(),
            ))
        })?;
        Ok(out)
    }

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_rfc_response_examples_with_eviction() {
        // RFC 7541, C.6: three responses, Huffman-coded, in a 256-byte table.
        let mut d = Decoder::default();
        fields(&mut d, &hex("3fe1 01")).unwrap(); // size update to 256
        let first = hex(
            "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6
             2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
        );
        assert_eq!(
            fields(&mut d, &first).unwrap(),
            pairs(&[
                (":status", "302"),
                ("cache-control", "private"),
                ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
                ("location", "https://www.example.com"),
            ])
        );
        assert_eq!(d.size, 222);
        let second = hex("4883 640e ff c1c0 bf");
        assert_eq!(
            fields(&mut d, &second).unwrap(),
            pairs(&[
                (":status", "307"),
                ("cache-control", "private"),
                ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
                ("location", "https://www.example.com"),
            ])
        );
        // ":status: 302" was evicted to make room for ":status: 307".
        assert_eq!(d.size, 222);
        assert_eq!(d.table.len(), 4);
    }

    #[test]
    fn a_request_block_decodes_to_its_fields() {
        let list = [
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/a/b?c=d"),
            (":authority", "127.0.0.1:8080"),
            ("user-agent", "spate/0.1"),
            ("accept-encoding", "gzip, deflate"),
            ("x-long", &"v".repeat(300)),
        ];
        let raw: Vec<(&[u8], &[u8])> = list
            .iter()
            .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
            .collect();
        let block = encode(&raw);
        assert_eq!(&block[..2], [0x82, 0x86], "static-table hits are one byte");
        let mut d = Decoder::default();
        assert_eq!(fields(&mut d, &block).unwrap(), pairs(&list));
        assert!(
            d.table.is_empty(),
            "the block must not touch the dynamic table"
        );
    }

    #[test]
    fn later_requests_refer_to_what_the_first_one_indexed() {
        let big = "b".repeat(4000);
        let list = [
            (":method", "GET"),
            (":path", "/x"),
            (":authority", "127.0.0.1:1"),
            ("user-agent", "spate/0.1"),
            ("x-big", big.as_str()),
            ("x-last", "1"),
        ];
        let raw: Vec<(&[u8], &[u8])> = list
            .iter()
            .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
            .collect();
        let (first, rest) = encode_indexed(&raw, TABLE_SIZE, None);
        // :method is static; :path, :authority, user-agent and x-last are indexed; x-big does
        // not fit in what is left of the table and stays a literal.
        assert!(rest.len() < 4000 + 16, "{}", rest.len());
        let mut d = Decoder::default();
        assert_eq!(fields(&mut d, &first).unwrap(), pairs(&list));
        assert_eq!(d.table.len(), 4);
        for _ in 0..3 {
            assert_eq!(fields(&mut d, &rest).unwrap(), pairs(&list));
        }
        assert_eq!(d.table.len(), 4, "later blocks insert nothing");
        // A server that allows a smaller table gets a size update first, and only what fits.
        let (first, rest) = encode_indexed(&raw, 64, Some(64));
        let mut d = Decoder::default();
        assert_eq!(first[0], 0x3f, "a size update");
        assert_eq!(fields(&mut d, &first).unwrap(), pairs(&list));
        assert_eq!(d.max, 64);
        assert_eq!(fields(&mut d, &rest).unwrap(), pairs(&list));
        assert_eq!(d.table.len(), 1);
    }

    #[test]
    fn malformed_blocks_are_errors_never_panics() {
        let mut d = Decoder::default();
        assert_eq!(fields(&mut d, &[0x80]), Err(HpackError::Index(0)));
        assert_eq!(fields(&mut d, &[0xbe]), Err(HpackError::Index(62)));
        assert_eq!(
            fields(&mut d, &[0x40, 0x05, b'a']),
            Err(HpackError::Truncated)
        );
        assert_eq!(fields(&mut d, &[0xff]), Err(HpackError::Truncated));
        assert_eq!(
            fields(&mut d, &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
            Err(HpackError::Integer)
        );
        assert_eq!(
            fields(&mut d, &[0x3f, 0xe2, 0x1f]),
            Err(HpackError::TableSize)
        );
        assert_eq!(fields(&mut d, &[0x88, 0x20]), Err(HpackError::TableSize));
        // Every prefix of a valid block is either valid or an error.
        let block = hex("4882 6402 5885 aec3 771a 4b");
        for cut in 0..block.len() {
            let _ = fields(&mut Decoder::default(), &block[..cut]);
        }
    }

    #[test]
    fn a_server_that_indexes_every_response_is_decoded_in_a_bounded_arena() {
        // As nginx does: `server` and `date` with incremental indexing in every response, the
        // name from the static table (and every tenth response a new name, to cover names
        // referring to dynamic entries as well).
        let mut d = Decoder::default();
        for i in 0..5_000u32 {
            let date = format!("Sat, 21 Nov 2026 20:{:02}:{:02} GMT", i / 60 % 60, i % 60);
            let mut block = vec![0x88, 0x76, 0x05];
            block.extend(b"nginx");
            block.push(0x61);
            let coded = crate::proto::h2::huffman::encode(date.as_bytes());
            block.push(0x80 | coded.len() as u8);
            block.extend(&coded);
            if i % 10 == 0 {
                block.extend([0x40, 0x05]);
                block.extend(b"x-new");
                block.extend([0x01, b'0' + (i / 10 % 10) as u8]);
                // The same name again, from the entry just inserted (index 62).
                block.extend([0x7e, 0x01, b'!']);
            }
            let got = fields(&mut d, &block).unwrap();
            assert_eq!(got[1], ("server".into(), "nginx".into()));
            assert_eq!(got[2], ("date".into(), date.clone()));
            if i % 10 == 0 {
                assert_eq!(got[4], ("x-new".into(), "!".into()), "response {i}");
            }
            // Every entry is still readable, and the table within its size.
            assert!(d.size <= d.max && d.bytes.len() <= ARENA, "response {i}");
            let newest = d.entry(62).unwrap();
            if i % 10 == 0 {
                assert_eq!(newest, (&b"x-new"[..], &b"!"[..]));
            } else {
                assert_eq!(newest, (&b"date"[..], date.as_bytes()));
            }
        }
        assert!(d.bytes.capacity() <= ARENA, "{}", d.bytes.capacity());
    }

    #[test]
    fn an_entry_larger_than_the_table_empties_it() {
        let mut d = Decoder::default();
        fields(&mut d, &[0x40, 0x01, b'a', 0x01, b'b']).unwrap();
        assert_eq!(d.table.len(), 1);
        let mut big = vec![0x40, 0x01, b'a', 0x7f];
        put_integer_tail(&mut big, 5000 - 127);
        big.extend(vec![b'x'; 5000]);
        fields(&mut d, &big).unwrap();
        assert!(d.table.is_empty());
        assert_eq!(d.size, 0);
    }

    fn put_integer_tail(out: &mut Vec<u8>, mut v: usize) {
        while v >= 0x80 {
            out.push((v & 0x7f) as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
}
