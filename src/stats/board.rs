//! The run's seconds while it goes, for what watches it (--live-json): each load thread hands
//! over each second of its timeline once it has closed it (once a second, off the request
//! path), and a reader takes the run's seconds in order, each added up over the threads once
//! every thread has handed over its own or is done. Added up the way the report adds them, so
//! the seconds taken are the report's timeline, one by one. Knows nothing of threads' clocks.

use std::collections::VecDeque;
use std::sync::Mutex;

use super::timeline::Second;

/// The seconds each thread has closed and the reader has not taken yet.
#[derive(Debug)]
pub struct Board {
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    pending: Vec<VecDeque<Second>>,
    done: Vec<bool>,
}

impl Board {
    /// A board for `threads` load threads.
    pub fn new(threads: usize) -> Board {
        Board {
            inner: Mutex::new(Inner {
                pending: vec![VecDeque::new(); threads],
                done: vec![false; threads],
            }),
        }
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A reader or thread that panicked left whole seconds behind: they are still sound.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Thread `thread` closed `second`.
    pub fn hand(&self, thread: usize, second: Second) {
        if let Some(q) = self.inner().pending.get_mut(thread) {
            q.push_back(second);
        }
    }

    /// Thread `thread` will close no more seconds.
    pub fn done(&self, thread: usize) {
        if let Some(d) = self.inner().done.get_mut(thread) {
            *d = true;
        }
    }

    /// The run's next seconds, in order: each once every thread has closed it or is done;
    /// `over`: the run is over, and every thread counts as done.
    pub fn take(&self, over: bool) -> Vec<Second> {
        let mut inner = self.inner();
        let Inner { pending, done } = &mut *inner;
        let mut out = Vec::new();
        loop {
            let ready = pending
                .iter()
                .zip(done.iter())
                .all(|(q, &d)| over || d || !q.is_empty());
            if !ready || pending.iter().all(VecDeque::is_empty) {
                return out;
            }
            let mut sum: Option<Second> = None;
            for q in pending.iter_mut() {
                if let Some(s) = q.pop_front() {
                    match &mut sum {
                        Some(total) => *total += &s,
                        None => sum = Some(s),
                    }
                }
            }
            out.extend(sum);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn second(i: u64, completed: u64) -> Second {
        Second {
            start_ns: i * 1_000_000_000,
            span_ns: 1_000_000_000,
            completed,
            ..Second::default()
        }
    }

    #[test]
    fn a_second_is_taken_once_every_thread_has_closed_it_or_is_done() {
        let b = Board::new(3);
        b.hand(0, second(0, 1));
        b.hand(1, second(0, 2));
        assert!(b.take(false).is_empty(), "thread 2 has not closed second 0");
        b.hand(2, second(0, 4));
        b.hand(0, second(1, 8));
        let got = b.take(false);
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].start_ns, got[0].completed), (0, 7));
        // Thread 1 is done: second 1 waits for thread 2 alone.
        b.done(1);
        assert!(b.take(false).is_empty());
        b.hand(2, second(1, 16));
        b.hand(2, second(2, 32));
        let got = b.take(false);
        assert_eq!(got.iter().map(|s| s.completed).collect::<Vec<_>>(), [24]);
        // Over: what is left is taken as it stands.
        let got = b.take(true);
        assert_eq!(
            got.iter()
                .map(|s| (s.start_ns, s.completed))
                .collect::<Vec<_>>(),
            [(2_000_000_000, 32)]
        );
        assert!(b.take(true).is_empty());
        // A thread out of range is ignored.
        b.hand(9, second(3, 1));
        b.done(9);
        assert!(b.take(true).is_empty());
    }
}
