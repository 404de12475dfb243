//! The HTML report's connection tables: opened, failed, setup, TLS or QUIC handshakes, protocols,
//! responses per connection and per client. Every figure is a cell that names its JSON field,
//! as in `tables`.

use std::fmt::Write as _;

use super::esc;
use super::tables::{Table, cards_of, count_val, ms_val, val};
use crate::numbers::count;
use crate::report::Report;

pub fn connections(r: &Report) -> String {
    let c = &r.connections;
    let mut a = Table::new("kv", &[]);
    a.row(
        "Requested",
        &[val("connections.requested", count(u64::from(c.requested)))],
    );
    a.row(
        "Established",
        &[count_val("connections.established", c.established)],
    );
    a.row(
        "Reconnects",
        &[count_val("connections.reconnects", c.reconnects)],
    );
    a.row(
        "Connect failures",
        &[count_val(
            "connections.connect_failures",
            c.connect_failures,
        )],
    );
    a.row(
        "Setup (before the clock)",
        &[ms_val("connections.setup_ms", Some(c.setup_ms))],
    );
    a.row(
        "Connect p99 (all)",
        &[ms_val("connections.connect.p99_ms", c.connect.p99_ms)],
    );
    if c.http3 > 0 {
        a.row(
            "QUIC handshake p99",
            &[ms_val("connections.tls.p99_ms", c.tls.p99_ms)],
        );
    } else if c.tls.count > 0 {
        a.row(
            "TLS handshake p99",
            &[ms_val("connections.tls.p99_ms", c.tls.p99_ms)],
        );
        a.row(
            "TLS sessions resumed",
            &[count_val("connections.tls_resumed", c.tls_resumed)],
        );
    }
    a.row(
        "HTTP/1.1 connections",
        &[count_val("connections.http1", c.http1)],
    );
    a.row(
        "HTTP/2 connections",
        &[count_val("connections.http2", c.http2)],
    );
    if let Some(q) = &c.quic {
        a.row(
            "HTTP/3 connections",
            &[count_val("connections.http3", c.http3)],
        );
        a.row(
            "QUIC packets sent",
            &[count_val("connections.quic.packets_sent", q.packets_sent)],
        );
        a.row(
            "QUIC packets lost",
            &[count_val("connections.quic.packets_lost", q.packets_lost)],
        );
    }
    let mut cards = vec![("Connections", a.finish())];
    let mut b = Table::new("kv", &[]);
    if let Some(p) = &c.requests_per_connection {
        let k = "connections.requests_per_connection";
        b.row(
            "Responses per connection, min",
            &[count_val(&format!("{k}.min"), p.min)],
        );
        b.row("median", &[count_val(&format!("{k}.p50"), p.p50)]);
        b.row("max", &[count_val(&format!("{k}.max"), p.max)]);
    }
    if let Some(f) = &c.requests_per_client {
        let k = "connections.requests_per_client";
        b.row(
            "Requests per client, min",
            &[count_val(&format!("{k}.min"), f.min)],
        );
        b.row("median", &[count_val(&format!("{k}.p50"), f.p50)]);
        b.row("max", &[count_val(&format!("{k}.max"), f.max)]);
        b.row(
            "clients never answered",
            &[count_val(&format!("{k}.starved"), f.starved)],
        );
    }
    cards.push(("Per connection and client", b.finish()));
    let mut out = cards_of(&cards);
    if let Some(e) = &c.connect_error {
        let _ = write!(
            out,
            r#"<p class="note">First connect error: {}</p>"#,
            esc(e)
        );
    }
    out
}
