//! HTTP/2 frame layout (RFC 9113, section 4 and 6): frame types, flags, error codes, the 9-byte
//! frame head, and writers that append the frames a client sends to a buffer. Bytes only: no
//! state, no I/O.

pub const DATA: u8 = 0x0;
pub const HEADERS: u8 = 0x1;
pub const PRIORITY: u8 = 0x2;
pub const RST_STREAM: u8 = 0x3;
pub const SETTINGS: u8 = 0x4;
pub const PUSH_PROMISE: u8 = 0x5;
pub const PING: u8 = 0x6;
pub const GOAWAY: u8 = 0x7;
pub const WINDOW_UPDATE: u8 = 0x8;
pub const CONTINUATION: u8 = 0x9;

pub const END_STREAM: u8 = 0x1;
pub const ACK: u8 = 0x1;
pub const END_HEADERS: u8 = 0x4;
pub const PADDED: u8 = 0x8;
pub const PRIORITY_FLAG: u8 = 0x20;

pub const SETTINGS_HEADER_TABLE_SIZE: u16 = 0x1;
pub const SETTINGS_ENABLE_PUSH: u16 = 0x2;
pub const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
pub const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;
pub const SETTINGS_MAX_HEADER_LIST_SIZE: u16 = 0x6;

pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
pub const HEAD_LEN: usize = 9;
/// The frame size every endpoint accepts before SETTINGS say otherwise.
pub const DEFAULT_MAX_FRAME: u32 = 16_384;
/// Windows start at this size (RFC 9113, 6.9.2) and may not exceed `MAX_WINDOW`.
pub const DEFAULT_WINDOW: u32 = 65_535;
pub const MAX_WINDOW: u32 = (1 << 31) - 1;

/// Error codes (RFC 9113, section 7).
pub const NO_ERROR: u32 = 0x0;
pub const PROTOCOL_ERROR: u32 = 0x1;
pub const FLOW_CONTROL_ERROR: u32 = 0x3;
pub const FRAME_SIZE_ERROR: u32 = 0x6;
pub const CANCEL: u32 = 0x8;
pub const COMPRESSION_ERROR: u32 = 0x9;
pub const ENHANCE_YOUR_CALM: u32 = 0xb;

/// The name of an error code, for messages.
pub fn error_name(code: u32) -> &'static str {
    match code {
        0x0 => "NO_ERROR",
        0x1 => "PROTOCOL_ERROR",
        0x2 => "INTERNAL_ERROR",
        0x3 => "FLOW_CONTROL_ERROR",
        0x4 => "SETTINGS_TIMEOUT",
        0x5 => "STREAM_CLOSED",
        0x6 => "FRAME_SIZE_ERROR",
        0x7 => "REFUSED_STREAM",
        0x8 => "CANCEL",
        0x9 => "COMPRESSION_ERROR",
        0xa => "CONNECT_ERROR",
        0xb => "ENHANCE_YOUR_CALM",
        0xc => "INADEQUATE_SECURITY",
        0xd => "HTTP_1_1_REQUIRED",
        _ => "an unknown error code",
    }
}

/// The 9-byte head of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    pub len: usize,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

impl Head {
    pub fn parse(b: &[u8; HEAD_LEN]) -> Head {
        Head {
            len: usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]),
            kind: b[3],
            flags: b[4],
            stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & MAX_WINDOW,
        }
    }
}

pub fn put_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    debug_assert!(len < 1 << 24);
    out.extend_from_slice(&[(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

pub fn put_settings(out: &mut Vec<u8>, settings: &[(u16, u32)]) {
    put_head(out, settings.len() * 6, SETTINGS, 0, 0);
    for &(id, value) in settings {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

pub fn put_window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    put_head(out, 4, WINDOW_UPDATE, 0, stream);
    out.extend_from_slice(&increment.to_be_bytes());
}

pub fn put_rst_stream(out: &mut Vec<u8>, stream: u32, code: u32) {
    put_head(out, 4, RST_STREAM, 0, stream);
    out.extend_from_slice(&code.to_be_bytes());
}

pub fn put_goaway(out: &mut Vec<u8>, code: u32) {
    // spate accepts no streams from the server, so the last one it processed is 0.
    put_head(out, 8, GOAWAY, 0, 0);
    out.extend_from_slice(&0u32.to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
}

pub fn put_ping(out: &mut Vec<u8>, flags: u8, payload: &[u8; 8]) {
    put_head(out, 8, PING, flags, 0);
    out.extend_from_slice(payload);
}

/// A header block as HEADERS plus CONTINUATION frames of at most `max_frame` bytes each.
pub fn put_headers(
    out: &mut Vec<u8>,
    stream: u32,
    block: &[u8],
    end_stream: bool,
    max_frame: usize,
) {
    let mut chunks = block.chunks(max_frame.max(1));
    let first = chunks.next().unwrap_or(&[]);
    let single = first.len() == block.len();
    let flags = (u8::from(end_stream) * END_STREAM) | (u8::from(single) * END_HEADERS);
    put_head(out, first.len(), HEADERS, flags, stream);
    out.extend_from_slice(first);
    let mut rest = chunks.peekable();
    while let Some(chunk) = rest.next() {
        let flags = u8::from(rest.peek().is_none()) * END_HEADERS;
        put_head(out, chunk.len(), CONTINUATION, flags, stream);
        out.extend_from_slice(chunk);
    }
}

pub fn put_data(out: &mut Vec<u8>, stream: u32, data: &[u8], end_stream: bool) {
    put_head(
        out,
        data.len(),
        DATA,
        u8::from(end_stream) * END_STREAM,
        stream,
    );
    out.extend_from_slice(data);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_round_trips_and_ignores_the_reserved_bit() {
        let mut out = Vec::new();
        put_head(&mut out, 0x01_02_03, HEADERS, END_HEADERS, 7);
        let mut b: [u8; 9] = out.try_into().unwrap();
        assert_eq!(
            Head::parse(&b),
            Head {
                len: 0x01_02_03,
                kind: HEADERS,
                flags: END_HEADERS,
                stream: 7
            }
        );
        b[5] |= 0x80;
        assert_eq!(Head::parse(&b).stream, 7);
    }

    #[test]
    fn a_large_header_block_is_split_into_continuations() {
        let block: Vec<u8> = (0..40u8).collect();
        let mut out = Vec::new();
        put_headers(&mut out, 3, &block, true, 16);
        let mut at = 0;
        let mut seen = Vec::new();
        let mut kinds = Vec::new();
        while at < out.len() {
            let h = Head::parse(out[at..at + 9].try_into().unwrap());
            kinds.push((h.kind, h.flags));
            seen.extend_from_slice(&out[at + 9..at + 9 + h.len]);
            at += 9 + h.len;
        }
        assert_eq!(seen, block);
        assert_eq!(
            kinds,
            [
                (HEADERS, END_STREAM),
                (CONTINUATION, 0),
                (CONTINUATION, END_HEADERS)
            ]
        );
        let mut one = Vec::new();
        put_headers(&mut one, 1, &block, false, 16_384);
        assert_eq!(one[4], END_HEADERS);
    }
}
