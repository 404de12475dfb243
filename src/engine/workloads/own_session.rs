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
use crate::mcp::legacy::{self, Listening};
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
    /// The legacy HTTP+SSE transport: the session's stream (a stream of the connection beside
    /// the call's; dropping it ends the session) and the endpoint it named.
    listening: Option<Listening>,
    target: Option<String>,
    /// The POST of the current step, taken (2xx), while its answer is awaited on the stream.
    acked: Option<Response>,
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
        if let Some(listen) = &h.listen {
            return self.poll_listening(p, ctx, adm, (place, id), (h, listen), cx);
        }
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
                    let Some(list) = ctx.setup.feature.list() else {
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

    /// [`poll`] over the legacy HTTP+SSE transport: the session's stream opened beside the
    /// call (`Protocol::listen`), then `initialize`, `notifications/initialized` and the call
    /// POSTed to the endpoint it named, each answer read from the stream; the session ends with
    /// its stream once the call is answered.
    fn poll_listening<P: Protocol<Events: Answers>>(
        &mut self,
        p: &mut P,
        ctx: &Shared,
        adm: &Admitted,
        (place, id): (usize, u64),
        (h, listen): (&crate::mcp::Handshake, &Bytes),
        cx: &mut Context<'_>,
    ) -> Poll<Result<Response, Fail>> {
        let failed = |f: &Fail| ctx.rec.connect_failed(|| f.to_string());
        if self.target.is_none() {
            if self.listening.is_none() {
                self.handshake_from = Some(Instant::now());
                let Some(l) = p.listen(ctx, &ctx.call_form(listen)?) else {
                    unreachable!("a legacy session per call on a connection of the slot's own");
                };
                self.listening = Some(l);
            }
            let Some(l) = &self.listening else {
                unreachable!("a session without its stream");
            };
            let target = ready!(legacy::poll_endpoint(l, &h.url, cx)).inspect_err(failed)?;
            l.inbox.borrow_mut().expect(0, legacy::INITIALIZE_ID, true);
            self.form = Some(ctx.call_form(&legacy::retarget(&h.initialize, &target))?);
            self.target = Some(target);
        }
        loop {
            let (Some(l), Some(target), Some(form)) = (&self.listening, &self.target, &self.form)
            else {
                unreachable!("a step without its session's stream or request");
            };
            let res = match self.acked {
                Some(r) => r,
                None => {
                    let sent = ready!(p.poll_send(ctx, cx, Sent::Listed(form)));
                    if self.step == Step::Call {
                        self.call_written = p.written();
                    }
                    let res = match (self.step, sent) {
                        (_, Ok(r)) => r,
                        (Step::Call, Err(f)) => return self.ended(Err(f)),
                        (_, Err(f)) => return Poll::Ready(Err(f).inspect_err(failed)),
                    };
                    self.acked = Some(res);
                    res
                }
            };
            match self.step {
                Step::Initialize => {
                    legacy::taken(res.status).inspect_err(failed)?;
                    let result = ready!(legacy::poll_answer(l, legacy::INITIALIZE_ID, cx));
                    self.acked = None;
                    legacy::opened(&result.inspect_err(failed)?).inspect_err(failed)?;
                    let ack = legacy::retarget(&h.initialized, target);
                    self.next(p, ctx, adm, Step::Initialized, &ack)?;
                }
                Step::Initialized => {
                    self.acked = None;
                    legacy::taken(res.status).inspect_err(failed)?;
                    if let Some(t) = self.handshake_from {
                        ctx.rec.handshake(t.elapsed().as_nanos() as u64);
                    }
                    let Some(list) = ctx.setup.feature.list() else {
                        unreachable!("a call in a run without a list");
                    };
                    let call = legacy::retarget(&list.requests[place].request, target);
                    l.inbox.borrow_mut().expect(0, id, false);
                    self.next(p, ctx, adm, Step::Call, &call)?;
                    p.with_events(|e| e.start(ctx, place, id));
                }
                Step::Call => {
                    let judged = match res.status {
                        404 => Err(Fail {
                            class: Failure::SessionExpired,
                            cause: Cause::Other(
                                "the server answered 404: it no longer knows the session",
                            ),
                        }),
                        200..300 => {
                            let heard = ready!(l.inbox.borrow_mut().poll_answer(0, cx));
                            p.with_events(|e| e.heard(ctx, res, heard))
                                .unwrap_or(Ok(res))
                        }
                        _ => p.with_events(|e| e.judge(ctx, res)).unwrap_or(Ok(res)),
                    };
                    return self.ended(judged);
                }
                Step::Delete => unreachable!("the legacy transport's session ends with its stream"),
            }
        }
    }

    /// The call's outcome: its session's stream closes, which ends the session.
    fn ended(&mut self, answer: Result<Response, Fail>) -> Poll<Result<Response, Fail>> {
        self.listening = None;
        self.acked = None;
        Poll::Ready(answer)
    }
}
