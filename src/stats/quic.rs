//! QUIC's own figures of a run's HTTP/3 connections (datagrams, packets sent and lost,
//! congestion events), summed as each connection closes. Facts only: the report prints them.

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quic {
    /// UDP datagrams sent and received.
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    /// QUIC packets sent, and those QUIC declared lost (and so sent again what they carried).
    pub packets_sent: u64,
    pub packets_lost: u64,
    pub bytes_lost: u64,
    /// Times the congestion controller cut its window.
    pub congestion_events: u64,
}

impl Quic {
    /// Adds the figures of one connection.
    pub fn add(&mut self, s: &quinn::ConnectionStats) {
        self.datagrams_sent += s.udp_tx.datagrams;
        self.datagrams_received += s.udp_rx.datagrams;
        self.packets_sent += s.path.sent_packets;
        self.packets_lost += s.path.lost_packets;
        self.bytes_lost += s.path.lost_bytes;
        self.congestion_events += s.path.congestion_events;
    }
}

impl AddAssign<&Quic> for Quic {
    fn add_assign(&mut self, o: &Quic) {
        self.datagrams_sent += o.datagrams_sent;
        self.datagrams_received += o.datagrams_received;
        self.packets_sent += o.packets_sent;
        self.packets_lost += o.packets_lost;
        self.bytes_lost += o.bytes_lost;
        self.congestion_events += o.congestion_events;
    }
}
