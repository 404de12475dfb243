//! `spate grpc`: the calls by their gRPC status, as ghz's status table counts them: OK (the
//! responses that completed with HTTP 200, each judged OK), then each code that ended calls,
//! with the server's first message for it. Numbers only, from the run's counts.

use serde::{Deserialize, Serialize};

use super::{Failure, FailureCounts};

/// The call and its statuses.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GrpcSummary {
    /// The method, `package.Service/Method`.
    pub call: String,
    pub server_streaming: bool,
    /// OK first, then each other code that occurred, by code.
    pub statuses: Vec<GrpcStatusRow>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GrpcStatusRow {
    pub code: u32,
    /// `OK`, `NOT_FOUND`...
    pub name: String,
    pub count: u64,
    /// The server's first `grpc-message` for it; null when it sent none (and for OK).
    pub first_message: Option<String>,
}

impl GrpcSummary {
    /// The statuses of a run of `plan`'s call that completed `ok` calls with HTTP 200 and
    /// failed as `failures` count.
    pub fn of(plan: &crate::plan::GrpcPlan, ok: u64, failures: &FailureCounts) -> GrpcSummary {
        let mut statuses = vec![GrpcStatusRow {
            code: 0,
            name: "OK".into(),
            count: ok,
            first_message: None,
        }];
        for code in 1..=16u32 {
            let class = Failure::grpc(code);
            let count = failures.get(class);
            if count == 0 {
                continue;
            }
            let name = crate::proto::grpc::code_name(code);
            // The class's example is "NAME: message" (`engine`'s words for it).
            let first_message = failures
                .example(class)
                .and_then(|e| e.strip_prefix(&format!("{name}: ")).map(str::to_owned));
            statuses.push(GrpcStatusRow {
                code,
                name,
                count,
                first_message,
            });
        }
        GrpcSummary {
            call: plan.call.clone(),
            server_streaming: plan.server_streaming,
            statuses,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ok_comes_first_then_each_code_that_ended_calls_with_its_first_message() {
        let mut f = FailureCounts::default();
        for _ in 0..3 {
            f.add_with(Failure::GrpcUnavailable, || "UNAVAILABLE: down".into());
        }
        f.add_with(Failure::GrpcNotFound, || "NOT_FOUND".into());
        f.add(Failure::Timeout);
        let plan = crate::plan::GrpcPlan {
            call: "kv.v1.Store/Get".into(),
            server_streaming: false,
        };
        let s = GrpcSummary::of(&plan, 40, &f);
        let rows: Vec<(u32, &str, u64, Option<&str>)> = s
            .statuses
            .iter()
            .map(|r| (r.code, r.name.as_str(), r.count, r.first_message.as_deref()))
            .collect();
        assert_eq!(
            rows,
            [
                (0, "OK", 40, None),
                (5, "NOT_FOUND", 1, None),
                (14, "UNAVAILABLE", 3, Some("down")),
            ]
        );
    }
}
