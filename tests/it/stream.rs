//! Streamed responses from a server no one here wrote: PyPI's `llmock`, an OpenAI-compatible
//! mock, set to a 200 ms first-token latency and 20 ms between chunks. Its event stream goes
//! through spate's HTTP/1.1 response parser into the streaming `Meter`, read by read with each
//! read's time, as the lane hands them over: the meter must see the stream's kind, its first
//! token no sooner than the latency, the gaps no shorter than the delay, the `[DONE]` sentinel
//! and the usage's output tokens. llmock lives in target/test-venv (scripts/test-venv.sh).

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::rc::Rc;
use std::time::Duration;

use spate::clock::Tick;
use spate::proto::h1::{HeadMemo, Progress, ResponseParser};
use spate::proto::stream::{Facts, Meter, Rules, Unit};
use spate::proto::{Events, Media};

use crate::support::{free_addr, spawn_listening, test_python};

/// Kills the server when the test ends, whatever happens.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The meter, and what the head said.
struct Watch<G> {
    meter: Meter<G>,
    head: Option<(u16, Media)>,
}

impl<G: FnMut(u64)> Events for Watch<G> {
    fn read_at(&mut self, at: Tick) {
        self.meter.read_at(at);
    }
    fn head(&mut self, status: u16, media: Media) {
        self.head = Some((status, media));
        self.meter.head(status, media);
    }
    fn data(&mut self, bytes: &[u8]) {
        self.meter.data(bytes);
    }
}

/// One streamed chat completion from `addr`: its head, what the meter saw, the gaps it was
/// told of, and when the request had been written.
fn stream_once(addr: std::net::SocketAddr) -> (Option<(u16, Media)>, Facts, Vec<u64>, Tick) {
    let body = r#"{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}"#;
    let request = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut socket = TcpStream::connect(addr).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    socket.write_all(request.as_bytes()).unwrap();
    let written = Tick::now();
    let mut gaps = Vec::new();
    let rules = Rc::new(Rules {
        done: Some(b"[DONE]".to_vec()),
        openai: true,
    });
    let mut watch = Watch {
        meter: Meter::new(Unit::Sse, rules, |g| gaps.push(g)),
        head: None,
    };
    let mut parser = ResponseParser::new(false);
    let mut heads = HeadMemo::default();
    let (mut buf, mut held) = (vec![0u8; 64 * 1024], Vec::new());
    loop {
        let n = socket.read(&mut buf).unwrap();
        assert!(n > 0, "llmock closed before the response ended");
        watch.read_at(Tick::now());
        held.extend_from_slice(&buf[..n]);
        match parser.feed_to(&held, &mut heads, &mut watch).unwrap() {
            Progress::Complete { .. } => break,
            Progress::NeedMore { consumed } => {
                held.drain(..consumed);
            }
        }
    }
    let facts = watch.meter.finish();
    (watch.head, facts, gaps, written)
}

#[test]
fn an_llm_stream_shows_its_first_token_latency_and_its_chunk_delay() {
    let Some(python) = test_python("llmock") else {
        return;
    };
    let llmock = python.with_file_name("llmock");
    let addr = free_addr();
    let _server = Child(spawn_listening(
        std::process::Command::new(llmock).args([
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            &addr.port().to_string(),
            "--latency-ms",
            "200",
            "--stream-chunk-delay-ms",
            "20",
            "--response-style",
            "static",
            "--log-level",
            "warning",
        ]),
        addr,
    ));
    let (head, f, gaps, written) = stream_once(addr);
    assert_eq!(head, Some((200, Media::EventStream)), "{f:?}");
    assert!(f.done, "the [DONE] sentinel: {f:?}");
    assert!(f.data_units >= 3, "tokens: {f:?}");
    assert!(
        f.units > f.data_units,
        "a role chunk and a usage chunk: {f:?}"
    );
    assert!(f.tokens.is_some_and(|t| t >= f.data_units), "usage: {f:?}");
    let ms = |ns: u64| ns as f64 / 1e6;
    let first = ms(f.first_data.unwrap().nanos_since(written));
    // The mock waits 200 ms before its first chunk: no token can come sooner.
    assert!(first >= 195.0, "first token after {first} ms: {f:?}");
    assert!(first < 5_000.0, "first token after {first} ms: {f:?}");
    assert_eq!(gaps.len() as u64, f.data_units - 1);
    // Tokens come at least 20 ms apart, so their mean gap is no shorter.
    let mean = ms(f.mean_gap_ns().unwrap());
    assert!(mean >= 18.0, "mean gap {mean} ms: {gaps:?}");
    assert!(mean < 1_000.0, "mean gap {mean} ms: {gaps:?}");
    assert_eq!(ms(f.longest_gap_ns), ms(*gaps.iter().max().unwrap()));
}
