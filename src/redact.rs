//! Masking of secrets in anything spate prints or saves: credentials in a URL and the values of
//! headers that carry them. It never touches the bytes sent to the server.

use std::borrow::Cow;

/// What a masked secret shows instead.
pub const MASK: &str = "***";

/// Headers whose values are secrets: never printed, saved or echoed in an error.
pub const SENSITIVE_HEADERS: [&str; 3] = ["authorization", "proxy-authorization", "cookie"];

pub fn is_sensitive(header: &str) -> bool {
    SENSITIVE_HEADERS
        .iter()
        .any(|s| s.eq_ignore_ascii_case(header.trim()))
}

/// `url` with any user information (`user:pass@`) replaced by the mask. Works on text that does
/// not parse as a URL too, since it is used in the errors about such text.
pub fn url(url: &str) -> Cow<'_, str> {
    let start = url.find("://").map_or(0, |i| i + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    match url[start..end].rfind('@') {
        Some(at) => Cow::Owned(format!("{}{MASK}{}", &url[..start], &url[start + at..])),
        None => Cow::Borrowed(url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_information_is_masked_wherever_it_is() {
        assert_eq!(url("http://u:p@h:1/x@y"), "http://***@h:1/x@y");
        assert_eq!(url("https://a@b@h/"), "https://***@h/");
        assert_eq!(url("u:p@h"), "***@h");
        assert_eq!(url("http://h/?q=a@b"), "http://h/?q=a@b");
        assert_eq!(url("http://h"), "http://h");
        assert_eq!(url(""), "");
        assert!(matches!(url("http://h/"), Cow::Borrowed(_)));
    }

    #[test]
    fn sensitive_names_in_any_case() {
        assert!(is_sensitive("Authorization"));
        assert!(is_sensitive(" COOKIE"));
        assert!(is_sensitive("proxy-authorization"));
        assert!(!is_sensitive("X-Api"));
    }
}
