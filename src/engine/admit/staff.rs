//! The closed model under `--stages` of connections: how many of a thread's connections run at
//! each moment (the job's whole connections, striped over the shards and then the threads as
//! the run's connections are), and which of the thread's connection groups have links running.
//! Must not open a connection or send: the thread's stager (`run::staffing`) does, and each
//! link ends itself when its group is above the level (`Gate::admit`).

use std::cell::{Cell, RefCell};
use std::task::Waker;
use std::time::Duration;

use crate::plan::stages::striped;
use crate::plan::{Shard, Stages};

/// A thread's part of a connection profile.
#[derive(Debug, Clone)]
pub struct Staffing {
    /// The profile after its warm-up (`Stages::after_warmup`), from the start signal.
    stages: Stages,
    warmup: Duration,
    /// This run's shard (index, count) and this thread (index, count).
    shard: (u64, u64),
    thread: (u64, u64),
}

impl Staffing {
    /// Thread `thread` of `threads`, in `shard` (when the run is one) of a job following
    /// `stages`, which begin with a warm-up of `warmup`.
    pub fn new(
        stages: Stages,
        warmup: Duration,
        shard: Option<Shard>,
        thread: usize,
        threads: usize,
    ) -> Staffing {
        Staffing {
            stages,
            warmup,
            shard: shard.map_or((0, 1), |s| (u64::from(s.index), u64::from(s.count))),
            thread: (thread as u64, threads as u64),
        }
    }

    /// How long before the measured window the profile starts (its warm-up).
    pub fn warmup(&self) -> Duration {
        self.warmup
    }

    /// The thread's connections that run `at` after the start signal: its first ones.
    pub fn groups_at(&self, at: Duration) -> usize {
        let job = self.stages.connections_at(at);
        let shard = striped(job, self.shard.0, self.shard.1);
        striped(shard, self.thread.0, self.thread.1) as usize
    }

    /// When the level may next change after `at`; `None` once the profile is over.
    pub fn next_change(&self, at: Duration) -> Option<Duration> {
        self.stages.next_change(at)
    }
}

/// Which of a thread's connection groups have links running, and the stager's waker: a group
/// whose last link ended may be opened again.
#[derive(Default)]
pub struct Crews {
    /// Per group: its links that have not ended.
    live: Vec<Cell<u32>>,
    ended: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl Crews {
    pub fn new(groups: usize) -> Crews {
        Crews {
            live: (0..groups).map(|_| Cell::new(0)).collect(),
            ..Crews::default()
        }
    }

    /// Whether group `g` has no link running.
    pub fn is_idle(&self, g: usize) -> bool {
        self.live[g].get() == 0
    }

    /// Group `g` runs `links` links from now.
    pub fn started(&self, g: usize, links: usize) {
        self.live[g].set(u32::try_from(links).unwrap_or(u32::MAX));
    }

    /// A link of group `g` ended; the group's last wakes the stager.
    pub fn link_ended(&self, g: usize) {
        let Some(live) = self.live.get(g) else {
            return;
        };
        live.set(live.get().saturating_sub(1));
        if live.get() == 0 {
            self.ended.set(true);
            if let Some(w) = self.waker.borrow_mut().take() {
                w.wake();
            }
        }
    }

    /// Whether a group's links all ended since the last call; else the stager waits on `waker`.
    pub fn take_ended(&self, waker: &Waker) -> bool {
        if self.ended.replace(false) {
            return true;
        }
        *self.waker.borrow_mut() = Some(waker.clone());
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threads_of_the_shards_share_each_level_exactly() {
        let stages = Stages::parse("10s:10,10s:10,10s:0").unwrap();
        for (shards, threads) in [(1u32, 1usize), (1, 3), (2, 2), (3, 4)] {
            for t in [0.0, 2.5, 5.0, 9.99, 15.0, 22.0, 29.0] {
                let at = Duration::from_secs_f64(t);
                let mut sum = 0;
                for s in 0..shards {
                    let shard = (shards > 1).then_some(Shard {
                        index: s,
                        count: shards,
                        job_connections: 10,
                        job_stop: crate::plan::Stop::Duration(Duration::from_secs(30)),
                    });
                    for k in 0..threads {
                        sum += Staffing::new(stages.clone(), Duration::ZERO, shard, k, threads)
                            .groups_at(at);
                    }
                }
                assert_eq!(
                    sum as u64,
                    stages.connections_at(at),
                    "{shards}x{threads} at {t}"
                );
            }
        }
    }

    #[test]
    fn the_last_link_of_a_group_wakes_the_stager() {
        let crews = Crews::new(2);
        crews.started(1, 2);
        let waker = Waker::noop();
        assert!(!crews.take_ended(waker));
        crews.link_ended(1);
        assert!(!crews.is_idle(1));
        assert!(!crews.take_ended(waker));
        crews.link_ended(1);
        assert!(crews.is_idle(1));
        assert!(crews.take_ended(waker));
        assert!(!crews.take_ended(waker), "once");
    }
}
