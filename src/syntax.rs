//! HTTP's syntax rules for what spate puts on the wire: tokens, request targets and field
//! values, checked wherever a method, a path or a header comes from outside (the command line,
//! a request list, a script). Pure functions of bytes; imports nothing.

/// Whether `s` is an HTTP token (RFC 9110 section 5.6.2): method and header names.
pub fn is_token(s: &str) -> bool {
    is_token_bytes(s.as_bytes())
}

/// `is_token` of bytes.
pub fn is_token_bytes(b: &[u8]) -> bool {
    !b.is_empty()
        && b.iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// Whether `b` may stand as the request target of a request line: not empty, and no space or
/// control character, which would end the line or the target early (RFC 9112 section 3.2).
pub fn is_request_target(b: &[u8]) -> bool {
    !b.is_empty() && !b.iter().any(|&c| c <= b' ' || c == 0x7f)
}

/// Whether `b` may stand as a header field's value: no CR, LF or NUL (RFC 9110 section 5.5),
/// which would end the field and begin another.
pub fn is_field_value(b: &[u8]) -> bool {
    !b.iter().any(|&c| matches!(c, b'\r' | b'\n' | 0))
}
