//! `spate serve`: what its flags become, a `ServeConfig` for the built-in target. Must not start
//! anything.

use super::args::ServeArgs;
use super::{Command, Exit};
use crate::serve::ServeConfig;

/// `--host` as an address, or a name resolved once (`localhost`).
fn listen_addr(host: &str, port: u16) -> Result<std::net::SocketAddr, Exit> {
    use std::net::ToSocketAddrs;
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    (bare, port)
        .to_socket_addrs()
        .map_err(|e| Exit::usage(format!("--host {host}: cannot resolve it: {e}")))?
        .next()
        .ok_or_else(|| Exit::usage(format!("--host {host}: no address")))
}

pub fn command(s: ServeArgs) -> Result<Command, Exit> {
    if s.h2c && s.tls_cert.is_some() {
        return Err(Exit::usage(
            "--h2c is for plain connections; with TLS, ALPN picks h2 or http/1.1",
        ));
    }
    let read = |flag: &str, p: &std::path::Path| {
        crate::files::read(flag, p, crate::files::PEM_LIMIT).map_err(Exit::usage)
    };
    let tls = match (&s.tls_cert, &s.tls_key) {
        (Some(cert), Some(key)) => Some(crate::serve::ServeTls {
            cert: read("--tls-cert", cert)?,
            key: read("--tls-key", key)?,
            client_ca: s
                .client_ca
                .as_deref()
                .map(|p| read("--client-ca", p))
                .transpose()?,
            http1_only: s.http1,
        }),
        _ => None,
    };
    Ok(Command::Serve(ServeConfig {
        addr: listen_addr(&s.host, s.port)?,
        body_size: usize::try_from(s.body_size)
            .map_err(|_| Exit::usage("--body-size is too large"))?,
        status: s.status,
        delay: s.delay,
        stall: match (s.stall_every, s.stall_for) {
            (Some(every), Some(length)) if length < every && !every.is_zero() => {
                Some(crate::serve::Stall { every, length })
            }
            (Some(_), Some(_)) => {
                return Err(Exit::usage(
                    "--stall-for must be shorter than --stall-every",
                ));
            }
            _ => None,
        },
        chunked: s.chunked,
        threads: s.threads.max(1) as usize,
        h2c: s.h2c,
        tls,
        max_streams: s.max_streams,
        http3: s.http3,
    }))
}
