//! `spate grpc`'s receiver as the engine sees it: `proto::grpc::Call` on an HTTP/2 stream
//! slot, made ready at each attempt and asked at the end of each response what the call's
//! status said. A status other than OK is a failure of its code's class (`grpc_not_found`...)
//! with its message as the class's example; a 200 that is not gRPC's is a protocol failure;
//! another HTTP status is counted as that status. The workload is `Fixed`: the request is the
//! run's own, built once. Must not account for attempts (the loop does).

use crate::clock::Tick;
use crate::engine::protocols::watch::Observe;
use crate::engine::slots::shared::{H2Handle, Shared};
use crate::proto::grpc::{Call, Verdict, code_name};
use crate::proto::{Cause, Fail, Response, h2};
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
