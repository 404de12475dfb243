//! A run's start: the wait, connections open, for `--start-at`'s wall-clock instant (so that
//! the shards of a job on several machines start together) and the refusal of a run that got
//! there later than `--start-deadline` allows; then what each thread is told at the start
//! signal: its budget, its deadline, or its share of the open model's schedule (the job's,
//! striped, for a shard). Sends nothing.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::clock::Tick;
use crate::engine::admit::pace::Schedule;
use crate::engine::run::split;
use crate::engine::run::thread::{Go, Paced};
use crate::engine::slots::shared::Limit;
use crate::engine::{Control, RunError};
use crate::plan::{Curve, Plan, StageKind, Stop};
use crate::shard::StartAt;

/// The longest sleep between looks at Ctrl-C.
const LOOK: Duration = Duration::from_millis(20);

/// Whether a run that starts at `s` is already later than its deadline allows (a pod scheduled
/// late, say): then it sends nothing.
pub(in crate::engine) fn too_late(s: StartAt) -> Result<(), RunError> {
    match (SystemTime::now().duration_since(s.at), s.deadline) {
        (Ok(late), Some(deadline)) if late > deadline => Err(RunError::Late { late, deadline }),
        _ => Ok(()),
    }
}

/// Waits until `s.at` (or a stop request); a run already later than its deadline is an error.
pub(in crate::engine) fn wait(s: StartAt, control: &Control) -> Result<(), RunError> {
    if SystemTime::now() >= s.at {
        return too_late(s);
    }
    while !control.stop_requested() {
        match s.at.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(LOOK)),
            _ => break,
        }
    }
    Ok(())
}

/// Each thread's start signal: `base` (the run's window) with the thread's limit. The closed
/// model splits -n over the threads by their connections; the open model interleaves one
/// schedule over the threads that have connections (`established[k] > 0`).
pub(in crate::engine) fn orders(
    plan: &Plan,
    established: &[u64],
    start: Instant,
    base: Go,
    stopped: bool,
) -> Vec<Go> {
    let window_start = base.window_start;
    let budgets = match plan.stop {
        Stop::Requests(n) => split::proportional(n, established),
        Stop::Duration(_) => vec![0; established.len()],
    };
    let active: Vec<usize> = (0..established.len())
        .filter(|&k| established[k] > 0)
        .collect();
    // A shard's is the job's schedule, striped: every shard-th request from its index.
    let job = match (&plan.stages, plan.rate) {
        // The warm-up holds the first stage's rate before the profile: its requests are those
        // before the window's start.
        (Some(s), _) if s.kind == StageKind::Rate => {
            let curve = Curve::of(&s.after_warmup(plan.warmup), 1.0);
            Some(Schedule::curve(start, Arc::new(curve)))
        }
        (_, Some(r)) => Some(Schedule::new(start, u128::from(r.num), u128::from(r.den))),
        _ => None,
    };
    let whole = job.map(|job| match plan.shard {
        Some(s) => job.share(u64::from(s.index), u64::from(s.count)),
        None => job,
    });
    let staffed = plan
        .stages
        .as_ref()
        .is_some_and(|s| s.kind == StageKind::Connections);
    // The open model counts -n in the job's requests, of which the striped part is ours.
    let paced_stop = plan.shard.map_or(plan.stop, |s| s.job_stop);
    (0..established.len())
        .map(|k| {
            let rank = active.iter().position(|&a| a == k);
            let (limit, paced) = match (&whole, rank, paced_stop) {
                // Stopped while connecting: run nothing, report what there is.
                _ if stopped => (Limit::Closed, None),
                (None, _, Stop::Requests(_)) => (Limit::Budget(budgets[k]), None),
                // A connection profile's slots run while their connection is within its level.
                (None, _, Stop::Duration(d)) if staffed => {
                    (Limit::Staffed(Tick::of(window_start + d)), None)
                }
                (None, _, Stop::Duration(d)) => (Limit::Deadline(Tick::of(window_start + d)), None),
                (Some(_), None, _) => (Limit::Closed, None),
                (Some(whole), Some(rank), stop) => {
                    let schedule = whole.share(rank as u64, active.len() as u64);
                    let first = whole.global_count_before(window_start);
                    let paced = Paced {
                        recorded_from: schedule.count_below(first),
                        end: match stop {
                            Stop::Requests(n) => schedule.count_below(first + n),
                            Stop::Duration(d) => schedule.count_before(window_start + d),
                        },
                        schedule,
                        max_lag: plan.max_lag,
                    };
                    (Limit::Paced, Some(paced))
                }
            };
            Go {
                limit,
                paced,
                ..base.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_past_its_deadline_is_refused_and_one_within_it_is_not() {
        let control = Control::new();
        let past = SystemTime::now() - Duration::from_secs(5);
        let late = wait(
            StartAt {
                at: past,
                deadline: Some(Duration::from_secs(1)),
            },
            &control,
        );
        assert!(matches!(late, Err(RunError::Late { late, .. }) if late >= Duration::from_secs(5)));
        for deadline in [None, Some(Duration::from_secs(60))] {
            assert!(wait(StartAt { at: past, deadline }, &control).is_ok());
        }
        // A wait in the future that a stop request ends.
        control.request_stop();
        let soon = SystemTime::now() + Duration::from_secs(3600);
        assert!(
            wait(
                StartAt {
                    at: soon,
                    deadline: None
                },
                &control
            )
            .is_ok()
        );
    }
}
