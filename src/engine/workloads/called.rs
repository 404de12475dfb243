//! `spate grpc`'s receivers as the engine sees them: `proto::grpc::Call` on an HTTP/2 stream
//! slot, made ready at each attempt and asked at the end of each response what the call's
//! status said; `Streaming` adds a `Watch` that times a server-streaming call's messages as
//! a stream's events. A status other than OK is a failure of its code's class (`grpc_not_found`...)
//! with its message as the class's example; a 200 that is not gRPC's is a protocol failure;
//! another HTTP status is counted as that status. The workload is `Fixed`: the request is the
//! run's own, built once. Must not account for attempts (the loop does).

use crate::clock::Tick;
use crate::engine::protocols::watch::{Observe, Streamed, Watch};
use crate::engine::slots::shared::{H2Handle, Shared};
use crate::engine::workloads::list_lane::Answers;
use crate::proto::grpc::{Call, Verdict, code_name};
use crate::proto::{Cause, Events, Fail, Media, Response, h2};
use crate::stats::Failure;

impl Observe for Call {
    const BEGINS: bool = true;
    const JUDGES: bool = true;

    fn begin(&mut self, _start: Tick, _recorded: bool) {
        self.reset();
    }

    fn h2_lane(h: H2Handle) -> Option<h2::Lane<Call>> {
        match h {
            H2Handle::Called(lane) => Some(lane),
            _ => None,
        }
    }

    fn judged(&mut self, ctx: &Shared, r: Response) -> Result<Response, Fail> {
        let unary = ctx
            .setup
            .feature
            .grpc()
            .is_some_and(|g| !g.server_streaming);
        outcome(self.verdict(unary), r)
    }
}

/// A server-streaming call: judged by its status as `Call` is, its messages timed by a
/// `Watch` (to the first, between them, per call) and its caps (--max-events,
/// --max-stream-time) and --idle-timeout kept as a stream's.
pub struct Streaming {
    call: Call,
    watch: Watch,
}

impl Streaming {
    pub fn new(watch: Watch) -> Streaming {
        Streaming {
            call: Call::default(),
            watch,
        }
    }
}

impl Events for Streaming {
    const WATCHES: bool = true;
    const FIELDS: bool = true;

    fn read_at(&mut self, at: Tick) {
        self.watch.read_at(at);
    }

    fn field(&mut self, name: &[u8], value: &[u8]) {
        self.call.field(name, value);
    }

    fn head(&mut self, status: u16, media: Media) {
        self.call.head(status, media);
        self.watch.head(status, media);
    }

    fn data(&mut self, bytes: &[u8]) {
        self.call.data(bytes);
        self.watch.data(bytes);
    }

    fn enough(&self) -> bool {
        self.watch.enough()
    }
}

impl Observe for Streaming {
    const BEGINS: bool = true;
    const JUDGES: bool = true;

    fn begin(&mut self, start: Tick, recorded: bool) {
        self.call.reset();
        self.watch.begin(start, recorded);
    }

    fn last_read(&self) -> Option<Tick> {
        self.watch.last_read()
    }

    fn h2_lane(h: H2Handle) -> Option<h2::Lane<Streaming>> {
        match h {
            H2Handle::CalledStreams(lane) => Some(lane),
            _ => None,
        }
    }

    fn settle(&mut self) -> Option<Streamed> {
        self.watch.settle()
    }

    /// A stream a cap ended was cut by spate before its status: it is the success the cap
    /// asked for (its messages so far were sound, or the framing's refusal stands).
    fn judged(&mut self, _ctx: &Shared, r: Response) -> Result<Response, Fail> {
        match self.watch.enough() {
            true => match self.call.framing() {
                Some(e) => outcome(Verdict::Protocol(e.to_string()), r),
                None => Ok(r),
            },
            false => outcome(self.call.verdict(false), r),
        }
    }
}

/// A list of messages' answers: judged already, as each call's, by the lane (`judged`).
impl Answers for Call {}
impl Answers for Streaming {}

/// The attempt's outcome from the call's verdict.
pub fn outcome(v: Verdict, r: Response) -> Result<Response, Fail> {
    match v {
        Verdict::Ok { .. } | Verdict::Http(_) => Ok(r),
        Verdict::Status { code, message } => Err(Fail {
            class: Failure::grpc(code),
            cause: Cause::Message(match message {
                Some(m) if !m.is_empty() => format!("{}: {m}", code_name(code)),
                _ => code_name(code),
            }),
        }),
        Verdict::Protocol(why) => Err(Fail {
            class: Failure::Protocol,
            cause: Cause::Message(why),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_verdict_is_counted_as_its_class() {
        let r = Response {
            status: 200,
            keep_alive: true,
            body_bytes: 8,
            bytes_in: 0,
            first_byte: None,
            done: Tick::now(),
        };
        assert!(outcome(Verdict::Ok { messages: 1 }, r).is_ok());
        assert!(
            outcome(Verdict::Http(503), r).is_ok(),
            "counted by its status"
        );
        let f = outcome(
            Verdict::Status {
                code: 5,
                message: Some("no such key".into()),
            },
            r,
        )
        .unwrap_err();
        assert_eq!(f.class, Failure::GrpcNotFound);
        assert_eq!(f.to_string(), "NOT_FOUND: no such key");
        let f = outcome(
            Verdict::Status {
                code: 42,
                message: None,
            },
            r,
        )
        .unwrap_err();
        assert_eq!(
            (f.class, f.to_string()),
            (Failure::GrpcUnknown, "code 42".into())
        );
        let f = outcome(Verdict::Protocol("no grpc-status".into()), r).unwrap_err();
        assert_eq!(f.class, Failure::Protocol);
    }
}
