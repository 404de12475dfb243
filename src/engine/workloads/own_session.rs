//! `--session per-request` over HTTP/2 and HTTP/3: each call in a session of its own, as streams
//! of the slot's connection: `initialize`, `notifications/initialized`, the call, then the
//! DELETE that ends the session. The call's latency covers its handshake (as a new
//! connection's does over HTTP/1.1) and ends at its answer; the DELETE follows on the slot's
//! time. Off the static path: each call's requests are built for its session. Must not account
//! for the attempt (the loop does).

use std::task::{Context, Poll, ready};
use std::time::Instant;

use bytes::Bytes;

use crate::clock::Tick;
use crate::engine::protocols::protocol::{Protocol, Sent};
use crate::engine::slots::shared::{Admitted, Listed, Shared};
use crate::engine::workloads::list_lane::Answers;
use crate::mcp::session::{self, Session, with_session};
use crate::proto::{Cause, Fail, Failure, Response};

/// Where a call in its own session is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Step {
    #[default]
    Initialize,
    Initialized,
    Call,
    Delete,
}

/// One slot's call in a session of its own.
#[derive(Default)]
pub struct OwnSession {
    step: Step,
    /// The request of the current step, in the protocol's form.
    form: Option<Listed>,
    session: Option<Session>,
    handshake_from: Option<Instant>,
    /// The call's outcome, kept while the DELETE goes.
    answer: Option<Result<Response, Fail>>,
    call_written: Option<Tick>,
}

impl OwnSession {
    /// A new call begins: its session is still to open.
    pub fn begin(&mut self) {
        *self = OwnSession::default();
    }

    /// When the call itself had been handed over in full, if it was: where its wait starts.
    pub fn sent_at(&self) -> Option<Tick> {
        self.call_written
    }

    /// The next step, on a new stream of the slot's connection.
    fn next<P: Protocol>(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        adm: &Admitted,
        step: Step,
        bytes: &Bytes,
    ) -> Result<(), Fail> {
        p.hop_ended(ctx, true);
        let form = self.form.insert(ctx.call_form(bytes)?);
        p.hop_begin(ctx, adm, Sent::Listed(form));
        self.step = step;
        Ok(())
    }

    /// Drives the call of list request `place` (JSON-RPC id `id`) of attempt `adm` through its
    /// session: the call's outcome, once its session was ended.
    pub fn poll<P: Protocol<Events: Answers>>(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        adm: &Admitted,
        (place, id): (usize, u64),
        cx: &mut Context<'_>,
    ) -> Poll<Result<Response, Fail>> {
        let Some(h) = ctx.handshake() else {
            unreachable!("a session per call in a run without a handshake");
        };
        loop {
            if self.form.is_none() {
                self.handshake_from = Some(Instant::now());
                self.form = Some(ctx.call_form(&h.initialize)?);
                p.with_events(Answers::capture);
            }
            let Some(form) = &self.form else {
                unreachable!("a step without its request");
            };
            let sent = ready!(p.poll_send(ctx, cx, Sent::Listed(form)));
            match self.step {
                Step::Initialize => {
                    let mut heard = p
                        .with_events(Answers::captured)
                        .flatten()
                        .unwrap_or_default();
                    let opened = sent.and_then(|r| session::opened(r.status, true, &mut heard));
                    let session =
                        opened.inspect_err(|f| ctx.rec.connect_failed(|| f.to_string()))?;
                    let ack = with_session(&h.initialized, &session);
                    self.session = Some(session);
                    self.next(p, ctx, adm, Step::Initialized, &ack)?;
                    p.with_events(Answers::capture);
                }
                Step::Initialized => {
                    let _ = p.with_events(Answers::captured);
                    let acked = sent.and_then(|r| session::acknowledged(r.status, true));
                    acked.inspect_err(|f| ctx.rec.connect_failed(|| f.to_string()))?;
                    if let Some(t) = self.handshake_from {
                        ctx.rec.handshake(t.elapsed().as_nanos() as u64);
                    }
                    let Some(session) = &self.session else {
                        unreachable!("a call without its session");
                    };
                    let Some(list) = &ctx.setup.list else {
                        unreachable!("a call in a run without a list");
                    };
                    let call = with_session(&list.requests[place].request, session);
                    self.next(p, ctx, adm, Step::Call, &call)?;
                    p.with_events(|e| e.start(ctx, place, id));
                }
                Step::Call => {
                    self.call_written = p.written();
                    let res = sent?;
                    let judged = match res.status {
                        404 => Err(Fail {
                            class: Failure::SessionExpired,
                            cause: Cause::Other(
                                "the server answered 404: it no longer knows the session",
                            ),
                        }),
                        _ => p.with_events(|e| e.judge(ctx, res)).unwrap_or(Ok(res)),
                    };
                    self.answer = Some(judged);
                    let Some(session) = &self.session else {
                        unreachable!("a call without its session");
                    };
                    let delete = with_session(&h.delete, session);
                    self.next(p, ctx, adm, Step::Delete, &delete)?;
                }
                Step::Delete => {
                    if sent.is_ok_and(|r| (200..300).contains(&r.status)) {
                        ctx.sessions_ended.set(ctx.sessions_ended.get() + 1);
                    }
                    let Some(answer) = self.answer.take() else {
                        unreachable!("a DELETE before its call's answer");
                    };
                    return Poll::Ready(answer);
                }
            }
        }
    }
}
