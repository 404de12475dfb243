//! `-v` and `--dry-run` of `spate grpc`: the run's call as its HTTP/2 stream carries it (the
//! request's fields, then its message as JSON), and for `-v` the answer on a connection made
//! as the run's are: the response head, each message as JSON (the first `SHOWN_MESSAGES`),
//! the trailers and the call's status. What the server sent is escaped; credentials masked.
//! Counts nothing of a run.

use std::fmt::Write as _;

use super::versions::h2_open;
use super::{connect, shown};
use crate::escape::term;
use crate::grpc::schema::Method;
use crate::plan::Plan;
use crate::proto::grpc::{MAX_MESSAGE, Status, code_name};

/// The most response messages `-v` shows; a longer stream is cancelled after them.
pub const SHOWN_MESSAGES: usize = 10;

/// The longest JSON of a message shown, in characters.
const JSON_SHOWN: usize = 2048;

/// `-v`: the call once before the run, as text (each line prefixed as curl does), or why it
/// failed, as far as it came.
pub fn exchange(plan: &Plan, method: &Method) -> Result<String, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut out = String::new();
    let limit = plan.connect_timeout + plan.timeout;
    let r = rt.block_on(async {
        match tokio::time::timeout(limit, call(plan, method, &mut out)).await {
            Ok(r) => r,
            Err(_) => Err(format!("no complete answer within {limit:?}")),
        }
    });
    match r {
        Ok(()) => Ok(out),
        Err(e) => Err(format!("{out}* {}\n", term(&e))),
    }
}

async fn call(plan: &Plan, method: &Method, out: &mut String) -> Result<(), String> {
    let endpoint = plan
        .route
        .resolve(&plan.target)
        .map_err(|e| e.to_string())?;
    let (stream, alpn_h2) = connect(plan, &endpoint, out).await?;
    if plan.target.tls && !alpn_h2 {
        return Err("the server did not choose h2 by ALPN: gRPC runs over HTTP/2".into());
    }
    let prepared = crate::request::h2_prepared(plan)?;
    let _ = writeln!(out, "* gRPC call {}{}", term(&method.name()), of_list(plan));
    let words = Some(request_line(plan, method));
    let (fields, mut body) = h2_open(plan, prepared, words, stream, out).await?;
    let mut buf = Vec::new();
    let mut shown_messages = 0;
    let mut cut = false;
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(|e| format!("reading the answer: {e}"))?;
        let _ = body.flow_control().release_capacity(chunk.len());
        buf.extend_from_slice(&chunk);
        while let Some((len, compressed)) = whole_message(&buf)? {
            shown_messages += 1;
            let bytes = &buf[5..5 + len];
            let shown = match compressed {
                false => json(method.response_json(bytes), method.output_name()),
                true => match fields.header("grpc-encoding").as_deref() {
                    Some(crate::grpc::gzip::NAME) => match crate::grpc::gzip::decompress(bytes) {
                        Ok(m) => json(method.response_json(&m), method.output_name()),
                        Err(e) => format!("(compressed with gzip, but {e})"),
                    },
                    other => format!(
                        "(compressed with {}, which spate did not ask for)",
                        term(other.unwrap_or("no grpc-encoding"))
                    ),
                },
            };
            let gz = if compressed { ", compressed" } else { "" };
            let _ = writeln!(out, "< message {shown_messages} ({len} bytes{gz}): {shown}");
            buf.drain(..5 + len);
        }
        if shown_messages >= SHOWN_MESSAGES {
            cut = true;
            break;
        }
    }
    if cut {
        let _ = writeln!(
            out,
            "* -v shows the first {SHOWN_MESSAGES} messages; the stream was cancelled after them"
        );
        return Ok(());
    }
    if !buf.is_empty() {
        let _ = writeln!(
            out,
            "* the answer ended inside a gRPC message ({} bytes left over)",
            buf.len()
        );
    }
    let mut status = Status::default();
    for (n, v) in &fields.fields {
        status.field(n.as_bytes(), v.as_bytes());
    }
    if let Some(trailers) = body
        .trailers()
        .await
        .map_err(|e| format!("reading the answer's trailers: {e}"))?
    {
        let _ = writeln!(out, "* trailers:");
        for (n, v) in &trailers {
            let _ = writeln!(
                out,
                "< {}",
                shown(n.as_str(), &String::from_utf8_lossy(v.as_bytes()))
            );
            status.field(n.as_str().as_bytes(), v.as_bytes());
        }
    }
    let _ = writeln!(out, "* {}", said_status(fields.status, &status));
    Ok(())
}

/// The length of the message `buf` starts with and whether it is compressed, once all of it is
/// there; a prefix no gRPC message has is an error.
fn whole_message(buf: &[u8]) -> Result<Option<(usize, bool)>, String> {
    let Some(p) = buf.first_chunk::<5>() else {
        return Ok(None);
    };
    let len = u32::from_be_bytes([p[1], p[2], p[3], p[4]]);
    match p[0] {
        0 if len > MAX_MESSAGE => {
            return Err(format!(
                "a gRPC message of {len} bytes, more than the {MAX_MESSAGE} spate reads"
            ));
        }
        0 | 1 => {}
        flag => return Err(format!("a gRPC message with flag byte {flag}")),
    }
    Ok((buf.len() >= 5 + len as usize).then_some((len as usize, p[0] == 1)))
}

/// Which message of a list is shown: the first (the one each load thread starts with).
fn of_list(plan: &Plan) -> String {
    match plan.list.as_ref().map(|l| l.entries.len()) {
        Some(n) if n > 1 => format!(" with the first of {n} messages"),
        _ => String::new(),
    }
}

/// The request's messages as the run sends them (one, or a client stream's), as JSON, a line
/// each.
fn request_line(plan: &Plan, method: &Method) -> String {
    let mut body = plan.body.as_slice();
    let mut framed = Vec::new();
    while let Ok(Some((len, compressed))) = whole_message(body) {
        framed.push((&body[5..5 + len], compressed));
        body = &body[5 + len..];
    }
    let one = framed.len() == 1;
    let lines: Vec<String> = framed
        .iter()
        .enumerate()
        .map(|(i, &(message, compressed))| {
            let n = if one {
                String::new()
            } else {
                format!(" {}", i + 1)
            };
            match compressed {
                true => {
                    let inflated = crate::grpc::gzip::decompress(message).unwrap_or_default();
                    format!(
                        "> message{n} ({} bytes, gzip of {}): {}",
                        message.len(),
                        inflated.len(),
                        json(method.request_json(&inflated), method.input_name())
                    )
                }
                false => format!(
                    "> message{n} ({} bytes): {}",
                    message.len(),
                    json(method.request_json(message), method.input_name())
                ),
            }
        })
        .collect();
    lines.join("\n")
}

/// A message's JSON for the terminal, cut to `JSON_SHOWN` characters, or why there is none.
fn json(j: Option<String>, type_name: String) -> String {
    match j {
        Some(j) if j.chars().count() > JSON_SHOWN => {
            let cut: String = j.chars().take(JSON_SHOWN).collect();
            format!("{}... (cut)", term(&cut))
        }
        Some(j) => term(&j).to_string(),
        None => format!("(not a {} message)", term(&type_name)),
    }
}

/// The call's outcome in words, as the run would count it.
fn said_status(http: u16, status: &Status) -> String {
    match (http, status.code) {
        (200, Some(0)) => "status OK: the run counts this call a success".into(),
        (200, Some(code)) => format!(
            "status {}{}: the run counts this call a failure ({})",
            code_name(code),
            status
                .message
                .as_deref()
                .map(|m| format!(" ({})", term(m)))
                .unwrap_or_default(),
            crate::stats::Failure::grpc(code).name()
        ),
        (200, None) => "no grpc-status: the run counts this call a protocol failure".into(),
        (s, _) => format!("HTTP status {s}: the run counts this call by that status"),
    }
}

/// `--dry-run`: what the run would do, in the report header's words, and the call as its
/// HTTP/2 stream would carry it, with no connection made; `reflected`: the schema was asked of
/// the server (the call itself was not sent).
pub fn dry_run(plan: &Plan, method: &Method, reflected: bool) -> Result<String, String> {
    let mut out = String::from(match reflected {
        true => {
            "spate --dry-run: the command line is valid; the schema came from the server's reflection service, and the call was not sent\n"
        }
        false => "spate --dry-run: the command line is valid; nothing was sent\n",
    });
    for line in crate::report::plan_words(plan) {
        let _ = writeln!(out, "  {}", term(&line));
    }
    let _ = writeln!(
        out,
        "The call {}{}, as its HTTP/2 stream carries it:",
        term(&method.name()),
        of_list(plan)
    );
    let prepared = crate::request::h2_prepared(plan)?;
    for (n, v) in prepared.fields.iter() {
        let _ = writeln!(
            out,
            "> {}",
            shown(&String::from_utf8_lossy(n), &String::from_utf8_lossy(v))
        );
    }
    let _ = writeln!(out, "{}", request_line(plan, method));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_whole_only_with_all_its_bytes_and_a_bad_prefix_is_said() {
        let mut m = crate::proto::grpc::prefix(3).to_vec();
        assert_eq!(whole_message(&m[..4]), Ok(None));
        assert_eq!(whole_message(&m), Ok(None));
        m.extend_from_slice(b"abc");
        assert_eq!(whole_message(&m), Ok(Some((3, false))));
        assert_eq!(whole_message(&[1, 0, 0, 0, 0]), Ok(Some((0, true))));
        assert!(
            whole_message(&[0, 0xff, 0, 0, 0])
                .unwrap_err()
                .contains("more than")
        );
        assert!(
            whole_message(&[7, 0, 0, 0, 0])
                .unwrap_err()
                .contains("flag byte 7")
        );
    }

    #[test]
    fn the_status_is_said_as_the_run_counts_it() {
        let st = |code: Option<u32>, message: Option<&str>| Status {
            code,
            malformed: false,
            message: message.map(str::to_owned),
        };
        assert!(said_status(200, &st(Some(0), None)).contains("success"));
        assert_eq!(
            said_status(200, &st(Some(5), Some("no \x1b[31mkey"))),
            "status NOT_FOUND (no \\x1b[31mkey): the run counts this call a failure (grpc_not_found)"
        );
        assert!(said_status(200, &st(None, None)).contains("protocol failure"));
        assert!(said_status(503, &st(None, None)).contains("by that status"));
    }
}
