//! Opening a connection for a thread: TCP or a Unix socket (timed), the proxy's tunnel, TLS
//! (timed apart, resumption counted), then the lane the server agreed to; or QUIC and HTTP/3 on
//! it (--http3). Where it goes is a `Via`: the run's own destination, or (--redirect) an origin a
//! redirect pointed to. Must not be on the static request path: a connect is rare, and that path
//! boxes it.

use std::cell::Cell;
use std::time::Instant;

use bytes::Bytes;

use crate::engine::protocols::open_session::NewConn;
use crate::engine::protocols::watch::Watch;
use crate::engine::slots::record::Record;
use crate::engine::slots::shared::{
    Connected, H2Handle, LaneChoice, OpenConn, OpenGuard, OpenH2, OpenH3, Shared,
};
use crate::engine::slots::slot::{ConnectPhase, Slot};
use crate::engine::workloads::answering::Answering;
use crate::engine::workloads::called::Streaming;
use crate::engine::workloads::follow::Led;
use crate::engine::workloads::list_lane::Listing;
use crate::engine::workloads::script_lane::Heard;
use crate::engine::workloads::workload::Work;
use crate::net::quic::OpenError;
use crate::net::{self, DialError, Stream, TlsClient};
use crate::proto::grpc::Call;
use crate::proto::h1::Conn;
use crate::proto::h2::{self as lane_h2, Counted};
use crate::proto::{Cause, Events, Fail};
use crate::route::Endpoint;
use crate::stats::{Failure, is_fd_exhaustion};

/// Where a connection goes and how.
#[derive(Clone, Copy)]
pub struct Via<'a> {
    pub endpoint: &'a Endpoint,
    /// Index into the endpoint's addresses of the one that accepted last.
    pub preferred: &'a Cell<usize>,
    /// The CONNECT request that opens a tunnel through --proxy, when it tunnels.
    pub tunnel: Option<&'a Bytes>,
    pub tls: Option<&'a TlsClient>,
    pub lane: LaneChoice,
}

impl Shared {
    /// The run's own destination: the URL's, wherever the route sends it.
    pub fn via(&self) -> Via<'_> {
        Via {
            endpoint: &self.setup.endpoint,
            preferred: &self.dial.preferred,
            tunnel: self.setup.tunnel.as_ref(),
            tls: self.setup.tls.as_ref(),
            lane: self.setup.lane,
        }
    }

    /// Opens a connection to the run's own destination ([`Shared::open_via`]).
    pub async fn open(&self, reconnect: bool, slot: &Slot) -> Result<Connected, Fail> {
        self.open_via(self.via(), reconnect, slot).await
    }

    /// Opens a connection: TCP (timed), TLS (timed apart, resumption counted), then the lane the
    /// server agreed to, marking on `slot` how far it came. `reconnect` says it was opened
    /// during the run (inside a request's latency), not before the clock.
    pub async fn open_via(
        &self,
        via: Via<'_>,
        reconnect: bool,
        slot: &Slot,
    ) -> Result<Connected, Fail> {
        let connected = match via.lane {
            LaneChoice::Http3 => self.open_h3(via, slot).await?,
            _ => {
                let (stream, alpn_h2) = self.dial(via, slot).await?;
                self.lane_on(stream, alpn_h2, via, slot).await?
            }
        };
        self.rec.connected(reconnect, &connected);
        Ok(connected)
    }

    /// A stream to `via`'s destination (`net::dial`: TCP or a Unix socket, the proxy's tunnel,
    /// TLS, each timed apart); and whether ALPN chose h2. A failure is counted here.
    pub(in crate::engine) async fn dial(
        &self,
        via: Via<'_>,
        slot: &Slot,
    ) -> Result<(Stream, bool), Fail> {
        let mut watch = Timed {
            rec: &self.rec,
            slot,
        };
        match net::dial(
            via.endpoint,
            via.preferred.get(),
            via.tunnel.map(|b| &b[..]),
            via.tls,
            &mut watch,
        )
        .await
        {
            Ok(d) => {
                via.preferred.set(d.index);
                Ok((d.stream, d.h2))
            }
            Err(e) => {
                let fail = match e {
                    DialError::Connect(e) => {
                        if is_fd_exhaustion(&e) {
                            self.rec.fd_exhausted();
                        }
                        Fail {
                            class: Failure::of_connect(&e),
                            cause: Cause::Io(e),
                        }
                    }
                    DialError::Tunnel(why) => Fail {
                        class: Failure::Connect,
                        cause: Cause::Message(why),
                    },
                    // Whatever ended the handshake (an alert, a close, a reset), the
                    // connection failed at TLS.
                    DialError::Tls(e) => Fail {
                        class: Failure::Tls,
                        cause: match net::describe_tls_io(&e, true) {
                            Some(words) => Cause::Message(words),
                            None => Cause::Io(e),
                        },
                    },
                };
                self.rec.connect_failed(|| fail.to_string());
                Err(fail)
            }
        }
    }

    /// The lane the server agreed to on `stream`, and the session when `spate mcp` opens one.
    async fn lane_on(
        &self,
        stream: Stream,
        alpn_h2: bool,
        via: Via<'_>,
        slot: &Slot,
    ) -> Result<Connected, Fail> {
        let h2 = match via.lane {
            LaneChoice::Http1 => false,
            LaneChoice::Alpn => alpn_h2,
            LaneChoice::Http2 if via.tls.is_some() && !alpn_h2 => {
                let fail = Fail {
                    class: Failure::H2,
                    cause: Cause::Other("--http2: the server did not agree to h2 with ALPN"),
                };
                self.rec.connect_failed(|| fail.to_string());
                return Err(fail);
            }
            LaneChoice::Http2 => true,
            LaneChoice::Http3 => unreachable!("HTTP/3 opens over QUIC, not TCP"),
        };
        let connected = if h2 {
            slot.connect_reached(ConnectPhase::H2Handshake);
            let opened = match self.open_h2(stream).await {
                Ok(open) => match &open.lane {
                    H2Handle::Answered(lane) if self.sessions_open_with_connections() => self
                        .open_sessions_on(NewConn::H2(lane), slot)
                        .await
                        .map(|()| open),
                    _ => Ok(open),
                },
                Err(fail) => Err(fail),
            };
            match opened {
                Ok(open) => Connected::H2(open),
                Err(fail) => {
                    self.rec.connect_failed(|| fail.to_string());
                    return Err(fail);
                }
            }
        } else {
            let mut conn = Conn::new(stream);
            if let Some(m) = self.mcp()
                && m.session == crate::mcp::SessionMode::Shared
            {
                let conversation = self.shared_conversation(slot).inspect_err(|fail| {
                    self.rec.connect_failed(|| fail.to_string());
                })?;
                self.keep_session(slot, Some(conversation));
            }
            if let Some(h) = self.handshake() {
                slot.connect_reached(ConnectPhase::Session);
                let opened = match &h.listen {
                    Some(listen) => self.open_listening(&mut conn, h, listen, via, slot).await,
                    None => self.open_session(&mut conn, h, slot).await,
                };
                if let Err(fail) = opened {
                    self.rec.connect_failed(|| fail.to_string());
                    return Err(fail);
                }
            }
            Connected::H1(OpenConn {
                conn,
                _open: self.guard(),
            })
        };
        Ok(connected)
    }

    /// An HTTP/2 connection whose streams tell their responses to the receiver of the thread's
    /// workload.
    async fn open_h2(&self, stream: Stream) -> Result<OpenH2, Fail> {
        let (lane, max_streams) = match self.work {
            Work::Fixed => {
                let (lane, n) = self.start_h2(stream, || ()).await?;
                (H2Handle::Plain(lane), n)
            }
            Work::Watched => {
                let (Some(plan), Some(gaps)) = (self.setup.feature.stream(), &self.rec.gaps) else {
                    unreachable!("a watched connection in a run that does not stream");
                };
                let make = || Watch::new(plan.clone(), gaps.clone());
                let (lane, n) = self.start_h2(stream, make).await?;
                (H2Handle::Watched(lane), n)
            }
            Work::Listed => {
                let (lane, n) = self.start_h2(stream, || Listing).await?;
                (H2Handle::Listed(lane), n)
            }
            Work::Answered => {
                let (lane, n) = self.start_h2(stream, Answering::default).await?;
                (H2Handle::Answered(lane), n)
            }
            Work::Scripted => {
                let keep = self.script.as_ref().is_some_and(|w| w.hears());
                let (lane, n) = self.start_h2(stream, || Heard::new(keep)).await?;
                (H2Handle::Scripted(lane), n)
            }
            Work::Followed => {
                let (lane, n) = self.start_h2(stream, Led::default).await?;
                (H2Handle::Followed(lane), n)
            }
            Work::Called => {
                let (lane, n) = self.start_h2(stream, Call::default).await?;
                (H2Handle::Called(lane), n)
            }
            Work::CalledStreams => {
                let (Some(plan), Some(gaps)) = (self.setup.feature.stream(), &self.rec.gaps) else {
                    unreachable!("a streaming call in a run that does not stream");
                };
                let make = || Streaming::new(Watch::new(plan.clone(), gaps.clone()));
                let (lane, n) = self.start_h2(stream, make).await?;
                (H2Handle::CalledStreams(lane), n)
            }
        };
        Ok(OpenH2 { lane, max_streams })
    }

    /// The HTTP/2 handshake, the connection task, and the server's SETTINGS.
    async fn start_h2<S: Events + 'static>(
        &self,
        stream: Stream,
        make: impl FnMut() -> S,
    ) -> Result<(lane_h2::Lane<S>, usize), Fail> {
        let io = Counted::new(stream, self.rec.h2_bytes.clone());
        let slots = self.setup.streams.max(1) + self.side_slots();
        let (lane, driver) = lane_h2::connect(
            io,
            self.setup.h2,
            slots,
            self.setup.h2_request.clone(),
            make,
        );
        let open = self.guard();
        self.tasks.spawn(async move {
            let _open = open;
            // How it ended reaches the streams through their own outcomes.
            driver.await;
        });
        let max_streams = lane.settled().await?;
        Ok((lane, max_streams))
    }

    /// A QUIC connection (its handshake timed as TLS's, which it carries) and HTTP/3 on it, whose
    /// control streams run as a task of their own. A failure is counted here.
    async fn open_h3(&self, via: Via<'_>, slot: &Slot) -> Result<Connected, Fail> {
        let (Some(h3), Endpoint::Tcp(addrs)) = (&self.setup.h3, via.endpoint) else {
            unreachable!(
                "--http3 without a QUIC client, or over a Unix socket: the plan refuses it"
            );
        };
        let addr = addrs[via.preferred.get() % addrs.len()];
        let t = Instant::now();
        slot.connect_reached(ConnectPhase::Quic);
        let opened = match h3.quic.connect(addr).await {
            Ok(opened) => opened,
            Err(e) => {
                let fail = match e {
                    OpenError::Socket(e) => {
                        if is_fd_exhaustion(&e) {
                            self.rec.fd_exhausted();
                        }
                        Fail {
                            class: Failure::of_connect(&e),
                            cause: Cause::Message(format!("cannot open a UDP socket: {e}")),
                        }
                    }
                    OpenError::Handshake { tls, words } => Fail {
                        class: if tls { Failure::Tls } else { Failure::Connect },
                        cause: Cause::Message(words),
                    },
                };
                self.rec.connect_failed(|| fail.to_string());
                return Err(fail);
            }
        };
        self.rec.step(net::Step::Tls, t.elapsed());
        let (mut driver, send) = match crate::proto::h3::start(opened.conn.clone()).await {
            Ok(started) => started,
            Err(fail) => {
                self.rec.connect_failed(|| fail.to_string());
                return Err(fail);
            }
        };
        let open = self.guard();
        self.tasks.spawn(async move {
            let _open = open;
            // How it ended reaches the streams through their own outcomes.
            std::future::poll_fn(|cx| driver.poll_close(cx)).await;
        });
        let group = self.slot_index(slot) / self.setup.streams.max(1);
        self.rec.quic_opened(group, opened.conn.clone());
        let open = OpenH3 {
            send,
            quic: opened.conn,
        };
        if self.sessions_open_with_connections()
            && let Err(fail) = self.open_sessions_on(NewConn::H3(&open), slot).await
        {
            self.rec.connect_failed(|| fail.to_string());
            return Err(fail);
        }
        Ok(Connected::H3(open))
    }

    pub(in crate::engine) fn guard(&self) -> OpenGuard {
        self.dial.open.set(self.dial.open.get() + 1);
        OpenGuard(self.dial.open.clone())
    }
}

/// The run's watch over a dial: each step's time into the thread's stats, and the slot told
/// which step it is in (its connect timeout names it).
struct Timed<'a> {
    rec: &'a Record,
    slot: &'a Slot,
}

impl net::Watch for Timed<'_> {
    fn reached(&mut self, step: net::Step) {
        match step {
            net::Step::Connect => {}
            net::Step::Tunnel => self.slot.connect_reached(ConnectPhase::Proxy),
            net::Step::Tls => self.slot.connect_reached(ConnectPhase::Tls),
        }
    }

    fn done(&mut self, step: net::Step, took: std::time::Duration) {
        self.rec.step(step, took);
    }

    fn resumed(&mut self) {
        self.rec.tls_resumed();
    }
}
