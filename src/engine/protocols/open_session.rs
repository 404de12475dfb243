//! `spate mcp`'s sessions as connections open: the handshake of the revisions with sessions
//! (over HTTP/1.1 on the connection; over HTTP/2 and HTTP/3 as streams of the connection, whose
//! slots then share its session with ids of their own), the legacy HTTP+SSE transport's stream
//! (over HTTP/1.1 a second connection, over HTTP/2 and HTTP/3 a stream of the connection, read
//! by a task of its own) and handshake, `--session shared`'s
//! per-connection ids, and each session's requests kept at the slot's place, in the run's
//! protocol's form. Called from `open` while a connection opens; must not be on the request
//! path.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use crate::engine::protocols::open::Via;
use crate::engine::slots::shared::{Conversation, Listed, OpenH3, Shared};
use crate::engine::slots::slot::{ConnectPhase, Slot};
use crate::engine::workloads::answering::Answering;
use crate::mcp::session::{self, Heard, Session, with_session};
use crate::proto::h1::{Conn, ReadSpace};
use crate::proto::{Cause, Fail, Failure, Response, h2, h3};

impl Shared {
    /// `spate mcp` with sessions: the handshake on a new connection, timed, and the session's
    /// requests kept for the slot's calls.
    pub(in crate::engine) async fn open_session(
        &self,
        conn: &mut Conn,
        h: &crate::mcp::Handshake,
        slot: &Slot,
    ) -> Result<(), Fail> {
        let t = Instant::now();
        let mut space = ReadSpace::new(16 << 10);
        let session =
            crate::mcp::session::handshake(conn, &h.initialize, &h.initialized, &mut space).await?;
        self.timed_handshake(t);
        let slot_ids = self.mcp().is_some_and(|m| m.slot_ids);
        let conversation = match session.id.is_some() || slot_ids {
            true => {
                let per_request = self
                    .mcp()
                    .is_some_and(|m| m.session == crate::mcp::SessionMode::PerRequest);
                let delete = per_request.then(|| with_session(&h.delete, &session));
                Some(self.slot_conversation(slot, &Joined::Session(&session), delete)?)
            }
            false => None,
        };
        self.keep_session(slot, conversation);
        Ok(())
    }

    /// `spate mcp` over the legacy HTTP+SSE transport: the session's stream opened on a
    /// connection of its own (read by a task beside the slot's), then the handshake POSTed on
    /// `conn` to the endpoint the stream named, timed as one; the calls go there too.
    pub(in crate::engine) async fn open_listening(
        &self,
        conn: &mut Conn,
        h: &crate::mcp::Handshake,
        listen: &Bytes,
        via: Via<'_>,
        slot: &Slot,
    ) -> Result<(), Fail> {
        use crate::mcp::legacy;
        let t = Instant::now();
        let (stream, _) = self.dial(via, slot).await?;
        slot.connect_reached(ConnectPhase::Session);
        let (listening, reading) = legacy::listen(Conn::new(stream), listen.clone());
        let open = self.guard();
        self.tasks.spawn(async move {
            let _open = open;
            reading.await;
        });
        let target = legacy::endpoint(&listening, &h.url).await?;
        let to = |b: &Bytes| legacy::retarget(b, &target);
        let mut space = ReadSpace::new(16 << 10);
        legacy::handshake(
            conn,
            &listening,
            &to(&h.initialize),
            &to(&h.initialized),
            &mut space,
        )
        .await?;
        self.timed_handshake(t);
        let first_id = crate::mcp::id_of(0);
        let conversation =
            self.conversation(|_, b| to(b), Some(Rc::new(listening)), None, first_id)?;
        self.keep_session(slot, Some(conversation));
        Ok(())
    }

    fn timed_handshake(&self, since: Instant) {
        let took = since.elapsed().as_nanos() as u64;
        self.rec.handshake(took);
    }

    /// A session's requests: the list's, each made by `with` (request `i`'s HTTP/1.1 bytes),
    /// in every form the list has them (HTTP/2's and HTTP/3's read back from those bytes).
    fn conversation(
        &self,
        with: impl Fn(usize, &Bytes) -> Bytes,
        listening: Option<Rc<crate::mcp::legacy::Listening>>,
        delete: Option<Bytes>,
        first_id: u64,
    ) -> Result<Rc<Conversation>, Fail> {
        let Some(list) = self.setup.feature.list() else {
            unreachable!("a session in a run without a list");
        };
        let requests = (list.requests.iter().enumerate())
            .map(|(i, l)| self.like(l, with(i, &l.request), with(i, &l.request_close)))
            .collect::<Result<_, Fail>>()?;
        Ok(Rc::new(Conversation {
            requests,
            listening,
            delete,
            first_id,
        }))
    }

    /// One MCP request (HTTP/1.1 bytes spate built) as `--session per-request` sends it over
    /// HTTP/2 or HTTP/3: in the form the list's requests have.
    pub(in crate::engine) fn call_form(&self, bytes: &Bytes) -> Result<Listed, Fail> {
        let Some(first) = self.setup.feature.list().and_then(|l| l.requests.first()) else {
            unreachable!("a session in a run without a list");
        };
        self.like(first, bytes.clone(), bytes.clone())
    }

    /// `request` (and `request_close`, its `Connection: close` form), MCP requests spate built,
    /// as the list's request `like` is: in each protocol's form `like` has, read back from the
    /// HTTP/1.1 bytes.
    fn like(&self, like: &Listed, request: Bytes, request_close: Bytes) -> Result<Listed, Fail> {
        let (h2, h3) = match (like.h2.is_empty(), like.h3.is_some()) {
            (true, false) => (h2::Other::default(), None),
            (no_h2, h3) => {
                let w = self.reframe(&request)?;
                let h2 = match no_h2 {
                    true => h2::Other::default(),
                    false => h2::Other::new(&w.h2()),
                };
                (h2, h3.then(|| Arc::new(w.h3())))
            }
        };
        Ok(Listed {
            request,
            request_close,
            h2,
            h3,
            ..like.clone()
        })
    }

    /// An MCP request spate built as HTTP/1.1 bytes, read back into HTTP/2's and HTTP/3's
    /// parts for the run's origin.
    fn reframe(&self, bytes: &[u8]) -> Result<crate::request::written::Written, Fail> {
        let Some(list) = self.setup.feature.list() else {
            unreachable!("a session in a run without a list");
        };
        crate::request::written::read(bytes, list.scheme, &list.authority).map_err(|e| Fail {
            class: Failure::Protocol,
            cause: Cause::Message(format!(
                "an MCP request HTTP/2 and HTTP/3 cannot carry: {e}"
            )),
        })
    }

    /// The requests `slot` sends in the session it `joined`, with ids of the slot's own when
    /// several slots share the session (`Prepared::slot_ids`), and the DELETE that ends it if it
    /// ends with its call.
    fn slot_conversation(
        &self,
        slot: &Slot,
        joined: &Joined<'_>,
        delete: Option<Bytes>,
    ) -> Result<Rc<Conversation>, Fail> {
        let slot_ids = self.mcp().is_some_and(|m| m.slot_ids);
        // Threads have different numbers of slots: number them apart.
        let first_id = match slot_ids {
            true => crate::mcp::shared_first_id(self.setup.thread * 65_536 + self.slot_index(slot)),
            false => crate::mcp::id_of(0),
        };
        let with = |i: usize, b: &Bytes| {
            let b = match joined {
                Joined::Run => b.clone(),
                Joined::Session(s) => with_session(b, s),
                Joined::Listening { target, .. } => crate::mcp::legacy::retarget(b, target),
            };
            match slot_ids {
                true => {
                    let i = i as u64;
                    crate::mcp::wire::with_id(&b, crate::mcp::SHARED_IDS + i, first_id + i)
                }
                false => b,
            }
        };
        let listening = match joined {
            Joined::Listening { stream, .. } => Some(stream.clone()),
            _ => None,
        };
        self.conversation(with, listening, delete, first_id)
    }

    /// `--session shared`: the run's session as `slot`'s connections send it, with ids of the
    /// slot's own (other connections' calls are in flight in the same session).
    pub(in crate::engine) fn shared_conversation(
        &self,
        slot: &Slot,
    ) -> Result<Rc<Conversation>, Fail> {
        self.slot_conversation(slot, &Joined::Run, None)
    }

    /// The sessions of the slots of `slot`'s HTTP/2 or HTTP/3 connection, which share the one
    /// they `joined`.
    fn keep_group_sessions(&self, slot: &Slot, joined: &Joined<'_>) -> Result<(), Fail> {
        let group = self.slot_index(slot) / self.setup.streams.max(1);
        for s in self.group_slots(group) {
            let conversation = self.slot_conversation(s, joined, None)?;
            self.keep_session(s, Some(conversation));
        }
        Ok(())
    }

    /// Whether an HTTP/2 or HTTP/3 connection opens its slots' sessions as it opens: in a
    /// revision with sessions or `--session shared`, except with a session per call (each call
    /// opens its own, `own_session`).
    pub(in crate::engine) fn sessions_open_with_connections(&self) -> bool {
        self.mcp()
            .is_some_and(|m| m.has_sessions() && m.session != crate::mcp::SessionMode::PerRequest)
    }

    /// The stream slots an HTTP/2 connection has after its calls' for the legacy MCP
    /// transport's session streams: one for the connection's session, or one a call slot when
    /// each call opens a session of its own.
    pub(in crate::engine) fn side_slots(&self) -> usize {
        match self.handshake().is_some_and(|h| h.listen.is_some()) {
            false => 0,
            true if self.sessions_open_with_connections() => 1,
            true => self.setup.streams.max(1),
        }
    }

    /// `spate mcp` in sessions on the new HTTP/2 or HTTP/3 connection `conn`: the handshake as
    /// streams of it (timed), or the run's shared session; each slot's requests kept.
    pub(in crate::engine) async fn open_sessions_on(
        &self,
        conn: NewConn<'_>,
        slot: &Slot,
    ) -> Result<(), Fail> {
        let Some(h) = self.handshake() else {
            return self.keep_group_sessions(slot, &Joined::Run);
        };
        slot.connect_reached(ConnectPhase::Session);
        if let Some(listen) = &h.listen {
            return self.open_listening_on(conn, h, listen, slot).await;
        }
        let t = Instant::now();
        let (res, mut got) = self.ask(&conn, &h.initialize).await?;
        let session = session::opened(res.status, true, &mut got)?;
        let ack = with_session(&h.initialized, &session);
        let (res, _) = self.ask(&conn, &ack).await?;
        session::acknowledged(res.status, true)?;
        self.timed_handshake(t);
        self.keep_group_sessions(slot, &Joined::Session(&session))
    }

    /// The legacy HTTP+SSE transport on the new HTTP/2 or HTTP/3 connection `conn`: the
    /// session's stream opened as a stream of it (on HTTP/2 the slot after the calls', read by
    /// a task of its own), then the handshake POSTed as streams to the endpoint it named, timed
    /// as one; the slots' calls go there too, with ids of their own, their answers on the
    /// stream.
    async fn open_listening_on(
        &self,
        conn: NewConn<'_>,
        h: &crate::mcp::Handshake,
        listen: &Bytes,
        slot: &Slot,
    ) -> Result<(), Fail> {
        use crate::mcp::legacy;
        let t = Instant::now();
        let get = self.reframe(listen)?;
        let listening = match &conn {
            NewConn::H2(lane) => {
                let side = lane.side(self.setup.streams.max(1));
                let get = h2::Other::new(&get.h2());
                let (listening, reading) = legacy::listen_with(move |tap| async move {
                    side.events().tap = Some(tap);
                    std::future::poll_fn(|cx| side.poll_open(cx, &get)).await?;
                    std::future::poll_fn(|cx| side.poll_response(cx)).await
                });
                self.tasks.spawn(reading);
                listening
            }
            NewConn::H3(open) => {
                let (send, quic) = (open.send.clone(), open.quic.clone());
                let get = Arc::new(get.h3());
                let (listening, reading) = legacy::listen_with(move |tap| {
                    let tap = Rc::new(RefCell::new(tap));
                    h3::exchange(send, quic, get, Rc::new(Cell::new(None)), tap)
                });
                self.tasks.spawn(reading);
                listening
            }
        };
        let target = legacy::endpoint(&listening, &h.url).await?;
        let to = |b: &Bytes| legacy::retarget(b, &target);
        listening
            .inbox
            .borrow_mut()
            .expect(0, legacy::INITIALIZE_ID, true);
        let (res, _) = self.ask(&conn, &to(&h.initialize)).await?;
        legacy::taken(res.status)?;
        legacy::opened(&legacy::answer(&listening, legacy::INITIALIZE_ID).await?)?;
        let (res, _) = self.ask(&conn, &to(&h.initialized)).await?;
        legacy::taken(res.status)?;
        self.timed_handshake(t);
        let joined = Joined::Listening {
            target: &target,
            stream: Rc::new(listening),
        };
        self.keep_group_sessions(slot, &joined)
    }

    /// One request of a handshake (HTTP/1.1 bytes spate built) on `conn`, and what was heard
    /// of its answer.
    async fn ask(&self, conn: &NewConn<'_>, bytes: &[u8]) -> Result<(Response, Heard), Fail> {
        let w = self.reframe(bytes)?;
        let (res, heard) = match conn {
            NewConn::H2(lane) => h2_ask(lane, &h2::Other::new(&w.h2())).await,
            NewConn::H3(open) => h3_ask(open, w.h3()).await,
        };
        Ok((res?, heard))
    }

    /// The session of `slot`'s new connection (dropping the one before).
    pub(in crate::engine) fn keep_session(
        &self,
        slot: &Slot,
        conversation: Option<Rc<Conversation>>,
    ) {
        let index = self.slot_index(slot);
        let mut sessions = self.sessions.borrow_mut();
        if sessions.len() < self.slots.len() {
            sessions.resize(self.slots.len(), None);
        }
        sessions[index] = conversation;
    }
}

/// The session a slot's requests are sent in.
enum Joined<'a> {
    /// The run's (`--session shared`): the calls as the list has them.
    Run,
    /// A Streamable HTTP session: its id in each request.
    Session(&'a Session),
    /// The legacy transport's: each request to the endpoint `target` its `stream` named.
    Listening {
        target: &'a str,
        stream: Rc<crate::mcp::legacy::Listening>,
    },
}

/// A new HTTP/2 or HTTP/3 connection, whose first streams carry a session's handshake.
pub(in crate::engine) enum NewConn<'a> {
    H2(&'a h2::Lane<Answering>),
    H3(&'a OpenH3),
}

/// One request of a handshake on stream slot 0 of a new HTTP/2 connection (no call is on it
/// yet), its answer heard by the slot's receiver in its handshake mode.
async fn h2_ask(
    lane: &h2::Lane<Answering>,
    request: &h2::Other,
) -> (Result<Response, Fail>, Heard) {
    lane.events(0).handshake = Some(Heard::default());
    let res = async {
        std::future::poll_fn(|cx| lane.poll_open(0, cx, Some(request))).await?;
        std::future::poll_fn(|cx| lane.poll_response(0, cx)).await
    }
    .await;
    let heard = lane.events(0).handshake.take().unwrap_or_default();
    (res, heard)
}

/// One request of a handshake on a new HTTP/3 connection, and what was heard of its answer.
async fn h3_ask(open: &OpenH3, request: h3::Request) -> (Result<Response, Fail>, Heard) {
    let heard = Rc::new(RefCell::new(Heard::default()));
    let res = h3::exchange(
        open.send.clone(),
        open.quic.clone(),
        Arc::new(request),
        Rc::new(Cell::new(None)),
        heard.clone(),
    )
    .await;
    let heard = std::mem::take(&mut *heard.borrow_mut());
    (res, heard)
}
