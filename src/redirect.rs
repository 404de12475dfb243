//! Following redirects (`--redirect N`): which responses are followed, where a Location points
//! (resolved as browsers resolve it, with the `url` crate), and the request that goes there, by
//! the rules browsers, curl and Go's client share. Pure: no sockets, no clock. The engine builds
//! each hop of a chain once per thread and keeps it; must not be called per request.

use crate::plan::Plan;
use crate::redact;
use crate::target::Target;

/// The statuses that are followed: moved (301, 308), found (302), see other (303), temporary
/// (307). 300 (a choice), 304 (not modified) and 305 (use proxy, obsolete) are answers.
pub fn is_followed(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// Headers that describe a request's body, dropped with it when a redirect turns the request
/// into a GET (the Fetch standard's list).
const BODY_HEADERS: [&str; 4] = [
    "content-type",
    "content-encoding",
    "content-language",
    "content-location",
];

/// Why a redirect cannot be followed: the server's Location is at fault, never the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedirectError {
    #[error("a {status} pointed to {location:?}, which is not a URL")]
    NotAUrl { status: u16, location: String },
    #[error("a {status} pointed to {location:?}: spate follows only http:// and https://")]
    Scheme { status: u16, location: String },
    #[error("a {status} pointed to an https:// URL, which --unix-socket cannot reach")]
    TlsOverUnixSocket { status: u16 },
    #[error("a {status} led to a request the run's protocol cannot send: {why}")]
    Unsendable { status: u16, why: String },
}

/// Where two requests go, as far as credentials are concerned: scheme, host and port.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Origin {
    pub tls: bool,
    pub host: String,
    pub port: u16,
}

impl Origin {
    pub fn of(t: &Target) -> Origin {
        Origin {
            tls: t.tls,
            host: t.host.clone(),
            port: t.port,
        }
    }
}

/// The request that follows a `status` response with Location `location` to the request
/// `from` (a plan whose target is where that request went). `first` is the run's own plan:
/// its credentials (Authorization, Cookie) go only to its own origin, and a Host header the user
/// set only there too.
pub fn next(
    first: &Plan,
    from: &Plan,
    status: u16,
    location: &[u8],
) -> Result<Plan, RedirectError> {
    let shown = || redact::url(&String::from_utf8_lossy(location)).into_owned();
    let not_a_url = || RedirectError::NotAUrl {
        status,
        location: shown(),
    };
    let base = url::Url::parse(&format!(
        "{}://{}{}",
        from.target.scheme(),
        from.target.authority(),
        from.target.path
    ))
    .map_err(|_| not_a_url())?;
    let mut url = base.join(&ascii(location)).map_err(|_| not_a_url())?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(RedirectError::Scheme {
            status,
            location: shown(),
        });
    }
    // The fragment stays with the client (RFC 9110 10.2.2: the original's would be inherited,
    // but a fragment never reaches a server either way).
    url.set_fragment(None);
    let target = Target::parse(url.as_str()).map_err(|_| not_a_url())?;
    if target.tls && first.route.unix_socket.is_some() {
        return Err(RedirectError::TlsOverUnixSocket { status });
    }
    let mut plan = from.clone();
    // 303 asks for a GET of the new URL; 301 and 302 turn a POST into a GET, as every browser
    // and curl do. 307 and 308 repeat the request as it was.
    let to_get = match status {
        303 => !plan.is_head(),
        301 | 302 => plan.method.eq_ignore_ascii_case("POST"),
        _ => false,
    };
    if to_get {
        plan.method = "GET".into();
        plan.body = Vec::new();
    }
    let bodiless = plan.body.is_empty() && !first.body.is_empty();
    // Credentials and the Host the user set are the first origin's, whoever redirects where;
    // a chain that comes back there gets them again.
    let home = Origin::of(&target) == Origin::of(&first.target);
    plan.headers = first
        .headers
        .iter()
        .filter(|(n, _)| home || !is_origin_bound(n))
        .filter(|(n, _)| !bodiless || !BODY_HEADERS.iter().any(|b| n.eq_ignore_ascii_case(b)))
        .cloned()
        .collect();
    plan.target = target;
    Ok(plan)
}

/// Headers sent only to the run's own origin: its credentials and a Host the user set.
fn is_origin_bound(name: &str) -> bool {
    name.eq_ignore_ascii_case("host")
        || (redact::is_sensitive(name) && !name.eq_ignore_ascii_case("proxy-authorization"))
}

/// `location` with every byte outside printable ASCII percent-encoded: servers send raw UTF-8,
/// which is not allowed in a URL but means its encoding.
fn ascii(location: &[u8]) -> String {
    let mut out = String::with_capacity(location.len());
    for &b in location {
        match b {
            0x21..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The property the `redirect` fuzz target checks on whatever a server puts in a Location: no
/// panic; a hop is http(s), keeps the first origin's credentials at home, and its request line is
/// one line of three parts (nothing a server sends can inject a header). Not used at run time.
#[doc(hidden)]
pub fn check(data: &[u8]) {
    let Some((&pick, location)) = data.split_first() else {
        return;
    };
    let status = [301, 302, 303, 307, 308][usize::from(pick) % 5];
    let mut first = Plan::new(Target::parse("http://a.test:8080/x/y?q=1").expect("a URL"));
    first.headers = vec![("Authorization".into(), "Bearer secret".into())];
    let Ok(hop) = next(&first, &first, status, location) else {
        return;
    };
    let bytes = crate::request::h1_bytes(&hop);
    let line_end = bytes
        .windows(2)
        .position(|w| w == b"\r\n")
        .expect("a request line");
    let line = &bytes[..line_end];
    assert!(
        line.split(|&b| b == b' ').count() == 3 && !line.contains(&b'\n'),
        "request line {:?}",
        String::from_utf8_lossy(line)
    );
    let home = Origin::of(&hop.target) == Origin::of(&first.target);
    let sends_secret = bytes.windows(6).any(|w| w == b"secret");
    assert_eq!(sends_secret, home, "credentials to {:?}", hop.target.url);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(url: &str, method: &str, headers: &[(&str, &str)], body: &[u8]) -> Plan {
        Plan {
            method: method.into(),
            headers: headers
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
            body: body.to_vec(),
            ..Plan::new(Target::parse(url).unwrap())
        }
    }

    fn url_of(p: &Plan) -> String {
        format!(
            "{}://{}{}",
            p.target.scheme(),
            p.target.authority(),
            p.target.path
        )
    }

    #[test]
    fn the_fuzzed_property_holds_for_hostile_locations() {
        for location in [
            &b"/a\r\nX-Injected: 1"[..],
            b"http://b.test/ HTTP/1.1\r\nHost: c",
            b"//a.test:8080/same\x00\xff",
            b"https://a.test:8080/",
            b"http://A.TEST:8080/upper",
            b"",
            b"\\\\b.test\\p",
            // Upper case and bytes that are not UTF-8 in a host (the fuzzer's first find).
            b"//UUUU\xbc\xff\xff\xff\xff\xff\xbf\xff\xff\xff\xff/Y",
        ] {
            for pick in 0..5 {
                check(&[&[pick][..], location].concat());
            }
        }
    }

    #[test]
    fn a_unicode_host_is_sent_in_punycode() {
        let from = plan("http://a.test/", "GET", &[], b"");
        let got = next(&from, &from, 302, "https://Caf\u{e9}.test/".as_bytes()).unwrap();
        assert_eq!(got.target.host, "xn--caf-dma.test");
        let bytes = crate::request::h1_bytes(&got);
        assert!(bytes.windows(22).any(|w| w == b"Host: xn--caf-dma.test"));
    }

    #[test]
    fn only_the_five_redirect_statuses_are_followed() {
        let followed: Vec<u16> = (100..600).filter(|&s| is_followed(s)).collect();
        assert_eq!(followed, [301, 302, 303, 307, 308]);
    }

    #[test]
    fn locations_resolve_against_the_url_they_answered() {
        let from = plan("http://a.test:8080/x/y/z?q=1", "GET", &[], b"");
        for (location, want) in [
            ("/abs", "http://a.test:8080/abs"),
            ("rel", "http://a.test:8080/x/y/rel"),
            ("../up?b=2", "http://a.test:8080/x/up?b=2"),
            ("?only=query", "http://a.test:8080/x/y/z?only=query"),
            ("//b.test/p", "http://b.test/p"),
            ("https://C.test:8443/s#frag", "https://c.test:8443/s"),
            ("/caf\u{e9} x", "http://a.test:8080/caf%C3%A9%20x"),
        ] {
            let got = next(&from, &from, 302, location.as_bytes()).unwrap();
            assert_eq!(url_of(&got), want, "{location}");
        }
    }

    #[test]
    fn see_other_and_a_moved_post_become_a_get_without_a_body() {
        let first = plan(
            "http://a.test/form",
            "POST",
            &[("Content-Type", "text/plain"), ("X-Keep", "1")],
            b"data",
        );
        for status in [301, 302, 303] {
            let got = next(&first, &first, status, b"/done").unwrap();
            assert_eq!(got.method, "GET", "{status}");
            assert!(got.body.is_empty(), "{status}");
            assert_eq!(got.headers, [("X-Keep".to_string(), "1".to_string())]);
        }
        for status in [307, 308] {
            let got = next(&first, &first, status, b"/again").unwrap();
            assert_eq!((got.method.as_str(), &got.body[..]), ("POST", &b"data"[..]));
            assert_eq!(got.headers.len(), 2);
        }
        // 303 keeps a HEAD a HEAD; 301 and 302 change only a POST.
        let head = plan("http://a.test/", "HEAD", &[], b"");
        assert_eq!(next(&head, &head, 303, b"/h").unwrap().method, "HEAD");
        let put = plan("http://a.test/", "PUT", &[], b"x");
        assert_eq!(next(&put, &put, 301, b"/p").unwrap().method, "PUT");
        assert_eq!(next(&put, &put, 303, b"/p").unwrap().method, "GET");
    }

    #[test]
    fn credentials_and_host_go_only_to_the_first_origin() {
        let first = plan(
            "http://a.test:8080/",
            "GET",
            &[
                ("Authorization", "Bearer s3cret"),
                ("Cookie", "id=1"),
                ("Host", "virtual.test"),
                ("Proxy-Authorization", "Basic p"),
                ("X-Trace", "t"),
            ],
            b"",
        );
        let names = |p: &Plan| p.headers.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        let same = next(&first, &first, 301, b"/b").unwrap();
        assert_eq!(names(&same).len(), 5);
        for elsewhere in [
            &b"http://b.test:8080/"[..],
            b"https://a.test:8080/",
            b"http://a.test:8081/",
        ] {
            let away = next(&first, &first, 302, elsewhere).unwrap();
            assert_eq!(names(&away), ["Proxy-Authorization", "X-Trace"]);
            // Back home, from elsewhere: they are the first origin's again.
            let home = next(&first, &away, 302, b"http://a.test:8080/c").unwrap();
            assert_eq!(names(&home).len(), 5);
        }
    }

    #[test]
    fn locations_that_cannot_be_followed_say_why_without_secrets() {
        let from = plan("http://a.test/", "GET", &[], b"");
        let e = next(&from, &from, 301, b"ftp://a.test/f").unwrap_err();
        assert!(
            matches!(e, RedirectError::Scheme { status: 301, .. }),
            "{e}"
        );
        let e = next(&from, &from, 302, b"http://[::1/").unwrap_err();
        assert!(matches!(e, RedirectError::NotAUrl { .. }), "{e}");
        let e = next(&from, &from, 307, b"http://u:pw@b.test/").unwrap_err();
        assert!(!e.to_string().contains("pw"), "{e}");
        let unix = Plan {
            route: crate::route::Route {
                unix_socket: Some("/tmp/s".into()),
                ..Default::default()
            },
            ..from.clone()
        };
        let e = next(&unix, &unix, 308, b"https://a.test/").unwrap_err();
        assert_eq!(e, RedirectError::TlsOverUnixSocket { status: 308 });
    }
}
