//! `--shard`, `--shard-from-env`, `--start-at` and `--start-deadline` made into a plan's part of
//! a job and its start: this part's connections and requests, checked so that every part has
//! some. Reads the environment and the clock once; runs nothing.

use std::time::SystemTime;

use super::Exit;
use super::args::ShardArgs;
use crate::plan::{Plan, Stop};
use crate::shard::{self, Shard, StartAt};

/// Makes `plan` (the job's, as the command line gave it) this shard's, and sets its start.
pub(super) fn apply(plan: &mut Plan, a: &ShardArgs) -> Result<(), Exit> {
    apply_with(plan, a, |k| std::env::var(k).ok(), SystemTime::now())
}

fn apply_with(
    plan: &mut Plan,
    a: &ShardArgs,
    env: impl Fn(&str) -> Option<String>,
    now: SystemTime,
) -> Result<(), Exit> {
    let which = match (a.shard, a.shard_from_env) {
        (Some(s), _) => Some(s),
        (None, true) => Some(shard::from_env(env).map_err(Exit::usage)?),
        (None, false) => None,
    };
    if let Some((index, count)) = which {
        let job = Shard {
            index,
            count,
            job_connections: plan.connections,
            job_stop: plan.stop,
        };
        let own = shard::part(u64::from(plan.connections), index, count);
        if own == 0 {
            let staffed = plan
                .stages
                .as_ref()
                .is_some_and(|s| s.kind == crate::plan::StageKind::Connections);
            return Err(Exit::usage(match staffed {
                true => format!(
                    "--shard {index}/{count}: --stages' highest target, {} connections, over {count} shards leaves this one none; give a target of {count} or more",
                    plan.connections
                ),
                false => format!(
                    "--shard {index}/{count}: -c {} over {count} shards leaves this one no connection; give -c {count} or more",
                    plan.connections
                ),
            }));
        }
        plan.connections = own as u32;
        if let Stop::Requests(n) = plan.stop {
            // -n is at least -c, so each part of it is at least the part's connections.
            plan.stop = Stop::Requests(shard::part(n, index, count));
        }
        plan.shard = Some(job);
    }
    if let Some(text) = &a.start_at {
        let at = match text.trim().strip_prefix('+') {
            Some(rest) => {
                now + super::values::duration(rest)
                    .map_err(|e| Exit::usage(format!("--start-at +{rest}: {e}")))?
            }
            None => {
                shard::parse_instant(text).map_err(|e| Exit::usage(format!("--start-at {e}")))?
            }
        };
        // One already past its deadline is a late start, as one that connected too slowly is:
        // the engine refuses it before connecting (exit 4, error kind `late`).
        plan.start_at = Some(StartAt {
            at,
            deadline: a.start_deadline,
        });
    }
    Ok(())
}

/// The lines printed before a shard's run or one that waits for its start.
pub(super) fn notes(plan: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(s) = plan.shard {
        let requests = match (plan.stop, s.job_stop) {
            (Stop::Requests(n), Stop::Requests(job)) => format!(
                ", {} of {} requests",
                crate::numbers::count(n),
                crate::numbers::count(job)
            ),
            _ => String::new(),
        };
        out.push(format!(
            "spate: shard {}/{}: {} of {} connections{requests}",
            s.index, s.count, plan.connections, s.job_connections
        ));
    }
    if let Some(s) = plan.start_at {
        let wait = s.at.duration_since(SystemTime::now()).unwrap_or_default();
        out.push(format!(
            "spate: starting at {} (in {}), once connected",
            humantime::format_rfc3339_millis(s.at),
            crate::numbers::millis(wait.as_secs_f64() * 1e3)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::target::Target;

    fn args(shard: Option<(u32, u32)>, from_env: bool) -> ShardArgs {
        ShardArgs {
            shard,
            shard_from_env: from_env,
            start_at: None,
            start_deadline: None,
            log_result: false,
        }
    }

    fn job(c: u32, stop: Stop) -> Plan {
        let mut p = Plan::new(Target::parse("http://127.0.0.1:1/").unwrap());
        p.connections = c;
        p.stop = stop;
        p
    }

    #[test]
    fn the_parts_of_connections_and_requests_sum_to_the_job() {
        let none = |_: &str| None;
        let now = SystemTime::now();
        let mut sums = (0u64, 0u64);
        for i in 0..4 {
            let mut p = job(10, Stop::Requests(1003));
            apply_with(&mut p, &args(Some((i, 4)), false), none, now).unwrap();
            let Stop::Requests(n) = p.stop else { panic!() };
            sums = (sums.0 + u64::from(p.connections), sums.1 + n);
            let s = p.shard.unwrap();
            assert_eq!((s.job_connections, s.job_stop), (10, Stop::Requests(1003)));
            p.validate().unwrap();
        }
        assert_eq!(sums, (10, 1003));
        let mut p = job(3, Stop::Requests(10));
        let e = apply_with(&mut p, &args(Some((3, 4)), false), none, now).unwrap_err();
        assert!(
            e.message.contains("leaves this one no connection"),
            "{}",
            e.message
        );
        // A connection profile's highest target is the job's connections.
        let mut p = job(1, Stop::Duration(Duration::from_secs(5)));
        p.stages = Some(crate::plan::Stages::parse("5s:1").unwrap());
        let e = apply_with(&mut p, &args(Some((1, 2)), false), none, now).unwrap_err();
        assert!(
            e.message
                .contains("--stages' highest target, 1 connections"),
            "{}",
            e.message
        );
        let mut p = job(8, Stop::Duration(Duration::from_secs(5)));
        let env = |k: &str| Some(if k == shard::INDEX_ENV { "1" } else { "2" }.to_string());
        apply_with(&mut p, &args(None, true), env, now).unwrap();
        assert_eq!(
            (p.connections, p.stop),
            (4, Stop::Duration(Duration::from_secs(5)))
        );
    }

    #[test]
    fn a_start_is_from_now_or_absolute_or_in_the_past() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000_000);
        let start = |at: &str, deadline: Option<u64>| {
            let mut p = job(1, Stop::Requests(1));
            let a = ShardArgs {
                start_at: Some(at.into()),
                start_deadline: deadline.map(Duration::from_secs),
                ..args(None, false)
            };
            apply_with(&mut p, &a, |_| None, now).map(|()| p.start_at.unwrap())
        };
        assert_eq!(
            start("+30s", None).unwrap().at,
            now + Duration::from_secs(30)
        );
        assert_eq!(
            start("2000000010000", Some(5)).unwrap().at,
            now + Duration::from_secs(10)
        );
        // In the past, within its deadline or with none: it starts at once when ready.
        assert!(start("1999999998000", Some(5)).is_ok());
        assert!(start("1999999998000", None).is_ok());
        // Long past: the plan says so, and the engine refuses it as a late start.
        assert!(start("1999999990000", Some(5)).is_ok());
        assert!(
            start("+soon", None)
                .unwrap_err()
                .message
                .contains("--start-at +soon")
        );
        assert!(
            start("noon", None)
                .unwrap_err()
                .message
                .contains("is not an instant")
        );
    }
}
