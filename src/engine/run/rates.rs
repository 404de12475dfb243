//! wrk's Req/Sec samples: each load thread's rate over intervals of about 100 ms of the measured
//! window, taken by the thread's sweeper (whose tick is at most that long). Nothing per request.

use std::time::{Duration, Instant};

use crate::clock::Tick;
use crate::engine::slots::shared::Shared;

/// wrk's Req/Sec: the thread's rate over each interval of at least `RATE_INTERVAL` of the
/// measured window, sampled by the sweeper (whose tick is at most that long).
#[derive(Default)]
pub struct Rates {
    /// When the current interval began, and the responses completed by then.
    from: Option<(Instant, u64)>,
}

const RATE_INTERVAL: Duration = Duration::from_millis(100);

impl Rates {
    pub fn sample(&mut self, ctx: &Shared, now: Instant) {
        let measuring = ctx.gate.started.get().is_some()
            && ctx.gate.warmup_end.get().is_none_or(|w| Tick::of(now) >= w)
            && ctx.gate.window_end.get().is_none_or(|w| Tick::of(now) <= w)
            && !ctx.gate.stop.get();
        if !measuring {
            self.from = None;
            return;
        }
        let done = ctx.rec.stats().completed;
        match self.from {
            Some((t, n)) if now.duration_since(t) >= RATE_INTERVAL => {
                let rate = (done - n) as f64 / now.duration_since(t).as_secs_f64();
                ctx.rec.rate_sample(rate);
                self.from = Some((now, done));
            }
            Some(_) => {}
            None => self.from = Some((now, done)),
        }
    }
}
