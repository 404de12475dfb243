//! `--start-at`: the wait, connections open, for the wall-clock instant a run starts at, so that
//! the shards of a job on several machines start together; and the refusal of a run that got
//! there later than `--start-deadline` allows. Sends nothing.

use std::time::{Duration, SystemTime};

use super::{Control, RunError};
use crate::shard::StartAt;

/// The longest sleep between looks at Ctrl-C.
const LOOK: Duration = Duration::from_millis(20);

/// Waits until `s.at` (or a stop request); a run already later than its deadline is an error.
pub(super) fn wait(s: StartAt, control: &Control) -> Result<(), RunError> {
    if let Ok(late) = SystemTime::now().duration_since(s.at) {
        return match s.deadline {
            Some(deadline) if late > deadline => Err(RunError::Late { late, deadline }),
            _ => Ok(()),
        };
    }
    while !control.stop_requested() {
        match s.at.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(LOOK)),
            _ => break,
        }
    }
    Ok(())
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
