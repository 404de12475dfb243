//! `spate mcp`'s sessions as connections open: the handshake of the revisions with sessions,
//! the legacy HTTP+SSE transport's stream (a second connection, read by a side task) and
//! handshake, `--session shared`'s per-connection ids, and each session's requests kept at the
//! slot's place. Called from `open` while a connection opens; must not be on the request path.

use std::rc::Rc;
use std::time::Instant;

use bytes::Bytes;

use crate::engine::protocols::open::Via;
use crate::engine::slots::shared::{Conversation, Listed, Shared};
use crate::engine::slots::slot::{ConnectPhase, Slot};
use crate::proto::Fail;
use crate::proto::h1::{Conn, ReadSpace};

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
        let conversation = session.id.is_some().then(|| {
            let with = |b: &Bytes| crate::mcp::session::with_session(b, &session);
            let per_request = self
                .setup
                .list
                .as_ref()
                .and_then(|l| l.mcp.as_ref())
                .is_some_and(|m| m.session == crate::mcp::SessionMode::PerRequest);
            let delete = per_request.then(|| with(&h.delete));
            self.conversation(|_, b| with(b), None, delete)
        });
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
        let conversation = self.conversation(|_, b| to(b), Some(listening), None);
        self.keep_session(slot, Some(conversation));
        Ok(())
    }

    fn timed_handshake(&self, since: Instant) {
        let took = since.elapsed().as_nanos() as u64;
        self.rec.handshake(took);
    }

    /// A session's requests: the list's, each made by `with`.
    fn conversation(
        &self,
        with: impl Fn(usize, &Bytes) -> Bytes,
        listening: Option<crate::mcp::legacy::Listening>,
        delete: Option<Bytes>,
    ) -> Rc<Conversation> {
        let Some(list) = &self.setup.list else {
            unreachable!("a session in a run without a list");
        };
        Rc::new(Conversation {
            requests: (list.requests.iter().enumerate())
                .map(|(i, l)| Listed {
                    request: with(i, &l.request),
                    request_close: with(i, &l.request_close),
                    ..l.clone()
                })
                .collect(),
            listening,
            delete,
            first_id: crate::mcp::id_of(0),
        })
    }

    /// `--session shared`: the run's session as `slot`'s connections send it, with ids of the
    /// slot's own (other connections' calls are in flight in the same session).
    pub(in crate::engine) fn shared_conversation(&self, slot: &Slot) -> Rc<Conversation> {
        // Threads have different numbers of slots: number them apart.
        let global = self.setup.thread * 65_536 + self.slot_index(slot);
        let first_id = crate::mcp::shared_first_id(global);
        let mut c = self.conversation(
            |i, b| {
                let i = i as u64;
                crate::mcp::wire::with_id(b, crate::mcp::SHARED_IDS + i, first_id + i)
            },
            None,
            None,
        );
        Rc::get_mut(&mut c)
            .expect("a conversation just made has no other owner")
            .first_id = first_id;
        c
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
