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

/// `url` with any user information (`user:pass@`) replaced by the mask. Used on text that did
/// not parse as a URL, so it cannot trust where the authority ends: a password may hold `/`,
/// `?` or `#` (`http://alice:pa/ss@host/`). Everything from the scheme to the last `@` is masked,
/// which may hide an `@` of the path too, and never shows a secret.
pub fn url(url: &str) -> Cow<'_, str> {
    let start = url.find("://").map_or(0, |i| i + 3);
    match url[start..].rfind('@') {
        Some(at) => Cow::Owned(format!("{}{MASK}{}", &url[..start], &url[start + at..])),
        None => Cow::Borrowed(url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_information_is_masked_wherever_it_is() {
        assert_eq!(url("http://u:p@h:1/x"), "http://***@h:1/x");
        assert_eq!(url("https://a@b@h/"), "https://***@h/");
        assert_eq!(url("u:p@h"), "***@h");
        // Where a password holds a character that ends an authority, the whole of it goes.
        for secret in ["S3cr3t/XYZ", "S3cr3t?XYZ", "S3cr3t#XYZ", "S3cr3t@XYZ"] {
            let text = format!("http://alice:{secret}@127.0.0.1:9/");
            assert_eq!(url(&text), "http://***@127.0.0.1:9/");
        }
        // Not knowing where the authority ends, an @ in the path is masked too.
        assert_eq!(url("http://h/?q=a@b"), "http://***@b");
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
