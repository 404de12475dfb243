//! One request's answer head, for a look before the run (`-v`, `--alt-svc`): the request
//! written whole, then the response read until its head parses complete, with whatever bytes
//! came after it in the same reads. Bounded by `MAX_HEAD_BYTES`. Off the load path: it
//! allocates and formats freely.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::MAX_HEAD_BYTES;

/// A response's head as it came, and the bytes after it read with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    pub head: Vec<u8>,
    pub rest: Vec<u8>,
}

impl Answered {
    /// The values of header `name` (any case), in order.
    pub fn values(&self, name: &str) -> Vec<String> {
        let mut headers = [httparse::EMPTY_HEADER; super::MAX_HEADERS];
        let mut res = httparse::Response::new(&mut headers);
        if res.parse(&self.head).is_err() {
            return Vec::new();
        }
        res.headers
            .iter()
            .filter(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).into_owned())
            .collect()
    }

    /// The status code, if the head has one.
    pub fn status(&self) -> Option<u16> {
        let mut headers = [httparse::EMPTY_HEADER; super::MAX_HEADERS];
        let mut res = httparse::Response::new(&mut headers);
        res.parse(&self.head).ok()?;
        res.code
    }
}

/// Writes `request` (one whole HTTP/1.1 request) on `stream` and reads its response's head.
/// The error is a sentence.
pub async fn answer_head<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    request: &[u8],
) -> Result<Answered, String> {
    stream
        .write_all(request)
        .await
        .map_err(|e| format!("writing the request: {e}"))?;
    stream
        .flush()
        .await
        .map_err(|e| format!("writing the request: {e}"))?;
    let mut got = Vec::with_capacity(4096);
    let mut buf = [0u8; 4096];
    loop {
        let mut headers = [httparse::EMPTY_HEADER; super::MAX_HEADERS];
        let mut res = httparse::Response::new(&mut headers);
        match res.parse(&got) {
            Ok(httparse::Status::Complete(end)) => {
                return Ok(Answered {
                    rest: got[end..].to_vec(),
                    head: got[..end].to_vec(),
                });
            }
            Ok(httparse::Status::Partial) if got.len() <= MAX_HEAD_BYTES => {}
            Ok(httparse::Status::Partial) => {
                return Err("the response head is over 64 KiB".into());
            }
            Err(e) => return Err(format!("the response has no valid head ({e})")),
        }
        match stream.read(&mut buf).await {
            Ok(0) => {
                return Err("the server closed the connection before a whole response head".into());
            }
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => return Err(format!("reading the response: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A head split at every byte reads the same, with the bytes after it kept.
    #[test]
    fn a_head_split_anywhere_is_read_whole() {
        let answer =
            b"HTTP/1.1 200 OK\r\nAlt-Svc: h3=\":443\"\r\nalt-svc: h3-29=\":443\"\r\n\r\nbody";
        for split in 1..answer.len() {
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            let got = rt.block_on(async {
                let (mut client, mut server) = tokio::io::duplex(64);
                let (a, b) = answer.split_at(split);
                let serve = async {
                    let mut req = [0u8; 4];
                    server.read_exact(&mut req).await.unwrap();
                    server.write_all(a).await.unwrap();
                    server.flush().await.unwrap();
                    tokio::task::yield_now().await;
                    server.write_all(b).await.unwrap();
                    server
                };
                let (got, _server) = futures_util::join!(answer_head(&mut client, b"GET "), serve);
                got
            });
            let got = got.unwrap();
            assert_eq!(got.status(), Some(200), "split at {split}");
            assert_eq!(got.values("alt-svc"), ["h3=\":443\"", "h3-29=\":443\""]);
            assert!(
                b"body".starts_with(&got.rest),
                "split at {split}: {:?}",
                got.rest
            );
        }
    }

    #[test]
    fn no_head_is_one_sentence() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let err = rt.block_on(async {
            let (mut client, mut server) = tokio::io::duplex(64);
            let serve = async {
                let mut req = [0u8; 4];
                server.read_exact(&mut req).await.unwrap();
                server.write_all(b"NOT HTTP\r\n\r\n").await.unwrap();
                server
            };
            let (got, _server) = futures_util::join!(answer_head(&mut client, b"GET "), serve);
            got
        });
        assert!(
            err.unwrap_err()
                .starts_with("the response has no valid head")
        );
    }
}
