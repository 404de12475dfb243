//! `--stages`: load that moves during a run, in k6's sense. Each stage goes linearly from the
//! previous target to its own over its duration (a `0s` stage is a jump; the first stage starts
//! from 0). Targets with `/s` are request rates, plain numbers connections. Here: the flag's
//! parser with its bounds, and the rate curve's arithmetic (the requests a profile schedules
//! before a time, and its inverse, the time of each request), as plain data. Must not know the
//! engine: the pacer asks `Curve` for intended times.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::units::MAX_DURATION;

/// Most requests per second a stage may ask for: far above what one machine sends, low enough
/// that a profile's counts stay exact in an f64.
pub const MAX_STAGE_RATE: f64 = 10_000_000.0;

/// Most connections a stage may ask for.
pub const MAX_STAGE_CONNECTIONS: u64 = 1_000_000;

/// Most stages in a profile.
pub const MAX_STAGES: usize = 1_000;

/// A load profile: its kind and its stages, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stages {
    pub kind: StageKind,
    pub stages: Vec<Stage>,
}

/// What the targets of a profile are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StageKind {
    /// Requests per second: the open model.
    Rate,
    /// Connections: the closed model.
    Connections,
}

/// One stage: where the load is at its end, reached linearly over `duration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stage {
    pub duration: Duration,
    /// Requests per 1,000 s (a rate, exact to 0.001/s), or connections.
    pub target: u64,
}

impl Stage {
    /// The target as the profile's unit: requests per second, or connections.
    pub fn value(&self, kind: StageKind) -> f64 {
        match kind {
            StageKind::Rate => self.target as f64 / 1000.0,
            StageKind::Connections => self.target as f64,
        }
    }
}

impl Stages {
    /// Parses `DUR:TARGET,...` (`30s:100/s,1m:500/s,30s:0/s`, or `30s:10,1m:50`).
    pub fn parse(s: &str) -> Result<Stages, String> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        if parts.iter().all(|p| p.is_empty()) {
            return Err("--stages: no stage; give DUR:TARGET,... (e.g. 30s:100/s,1m:500/s)".into());
        }
        if parts.len() > MAX_STAGES {
            return Err(format!(
                "--stages: {} stages, at most {MAX_STAGES}",
                parts.len()
            ));
        }
        let mut kind = None;
        let mut stages = Vec::with_capacity(parts.len());
        for (i, part) in parts.iter().enumerate() {
            let n = i + 1;
            let Some((dur, target)) = part.split_once(':') else {
                return Err(format!(
                    "--stages: stage {n} ({part:?}) is not DUR:TARGET (e.g. 30s:100/s for a rate, 30s:10 for connections)"
                ));
            };
            let duration =
                crate::units::duration(dur).map_err(|e| format!("--stages: stage {n}: {e}"))?;
            let (this, target) = match target.trim().strip_suffix("/s") {
                Some(rate) => (StageKind::Rate, milli_rate(rate, n)?),
                None => (StageKind::Connections, connections(target, n)?),
            };
            if *kind.get_or_insert(this) != this {
                return Err(format!(
                    "--stages: stage {n} ({part:?}) mixes kinds: every target is a rate (100/s) or every target is connections (10)"
                ));
            }
            stages.push(Stage { duration, target });
        }
        let stages = Stages {
            kind: kind.unwrap_or(StageKind::Rate),
            stages,
        };
        let total = stages.duration();
        if total.is_zero() {
            return Err("--stages: the stages last 0s: give at least one a duration".into());
        }
        if total > MAX_DURATION {
            return Err(format!("--stages: the stages last {total:?}, at most 365d"));
        }
        if stages.stages.iter().all(|s| s.target == 0) {
            return Err("--stages: every target is 0: the profile sends nothing".into());
        }
        Ok(stages)
    }

    /// The profile as the flag writes it: `30s:100/s,1m:500/s`.
    pub fn written(&self) -> String {
        let unit = match self.kind {
            StageKind::Rate => "/s",
            StageKind::Connections => "",
        };
        let stage = |s: &Stage| {
            let value = s.value(self.kind);
            let d = humantime::format_duration(s.duration);
            format!("{d}:{value}{unit}")
        };
        self.stages.iter().map(stage).collect::<Vec<_>>().join(",")
    }

    /// How long the profile lasts: the run's duration.
    pub fn duration(&self) -> Duration {
        self.stages
            .iter()
            .fold(Duration::ZERO, |a, s| a.saturating_add(s.duration))
    }

    /// The profile as the engine follows it after a warm-up of `warmup`: the first stage's
    /// target held for that long, then the profile from its start as written. The same
    /// profile without one.
    pub fn after_warmup(&self, warmup: Duration) -> Stages {
        let Some(first) = self.stages.first().filter(|_| !warmup.is_zero()) else {
            return self.clone();
        };
        let hold = |duration| Stage {
            duration,
            target: first.target,
        };
        let mut stages = vec![hold(Duration::ZERO), hold(warmup)];
        // Back to where the profile starts: 0, from which its first stage goes.
        stages.push(Stage {
            duration: Duration::ZERO,
            target: 0,
        });
        stages.extend_from_slice(&self.stages);
        Stages {
            kind: self.kind,
            stages,
        }
    }

    /// The highest target: the connections a connection profile needs at most.
    pub fn peak(&self) -> u64 {
        self.stages.iter().map(|s| s.target).max().unwrap_or(0)
    }

    /// The stage `at` falls in, from 1 (a jump lasts no time, so none falls in it), and how many
    /// stages there are; `None` after the end.
    pub fn stage_at(&self, at: Duration) -> Option<(usize, usize)> {
        let mut end = Duration::ZERO;
        for (i, s) in self.stages.iter().enumerate() {
            end += s.duration;
            if at < end {
                return Some((i + 1, self.stages.len()));
            }
        }
        None
    }

    /// The target `at` into the profile (linear within a stage; after a jump, the new level),
    /// in the profile's unit; 0 after its end.
    pub fn target_at(&self, at: Duration) -> f64 {
        let (mut from, mut level) = (Duration::ZERO, 0.0);
        for s in &self.stages {
            let to = s.value(self.kind);
            let end = from + s.duration;
            if at < end {
                let f = (at - from).as_secs_f64() / s.duration.as_secs_f64();
                return level + (to - level) * f;
            }
            (from, level) = (end, to);
        }
        0.0
    }

    /// A connection profile's whole connections `at` into it: the target rounded down (never
    /// more connections busy than it asks for), 0 after its end.
    pub fn connections_at(&self, at: Duration) -> u64 {
        (self.target_at(at) + LEVEL_SLACK).floor() as u64
    }

    /// When, after `at`, [`Stages::connections_at`] may next change: where the line of the
    /// current stage crosses the next whole connection, or the stage's end (the next may jump);
    /// `None` once the profile is over. The caller asks again at that time, never before.
    pub fn next_change(&self, at: Duration) -> Option<Duration> {
        let (mut from, mut level) = (Duration::ZERO, 0.0);
        for s in &self.stages {
            let to = s.value(self.kind);
            let end = from + s.duration;
            if at < end {
                let now = (self.target_at(at) + LEVEL_SLACK).floor();
                // The level it goes to next: one up on a rise, one down on a fall.
                let next = match to.partial_cmp(&level) {
                    Some(std::cmp::Ordering::Greater) if now + 1.0 <= to + LEVEL_SLACK => now + 1.0,
                    Some(std::cmp::Ordering::Less) => now,
                    _ => return Some(end),
                };
                let f = (next - LEVEL_SLACK - level) / (to - level);
                let t = from + s.duration.mul_f64(f.clamp(0.0, 1.0));
                return Some(t.min(end));
            }
            (from, level) = (end, to);
        }
        None
    }
}

impl Stages {
    /// The whole connections a connection profile ran on average from `from` to `to` (the
    /// level at `from` when they are the same), each level as `part` makes it (a shard's, a
    /// thread's share): the integral of the steps the run keeps, not of the line.
    pub fn mean_connections(&self, from: Duration, to: Duration, part: impl Fn(u64) -> u64) -> f64 {
        if to <= from {
            return part(self.connections_at(from)) as f64;
        }
        let (mut at, mut sum) = (from, 0.0);
        while at < to {
            let next = self
                .next_change(at)
                .map_or(to, |n| n.max(at + Duration::from_micros(1)))
                .min(to);
            sum += part(self.connections_at(at)) as f64 * (next - at).as_secs_f64();
            at = next;
        }
        sum / (to - from).as_secs_f64()
    }
}

/// How far below a whole connection the line may be and still count it: the times of the
/// crossings are computed, and read back a hair under the level they were computed for.
const LEVEL_SLACK: f64 = 1e-6;

/// Of `level` things striped over `count` parts (thing i is part i mod count's), how many are
/// part `index`'s: a shard's connections of the job's, a thread's of its shard's. The same
/// split as the run's connections (`shard::part`), so that a part's first ones are its own.
pub fn striped(level: u64, index: u64, count: u64) -> u64 {
    let count = count.max(1);
    level / count + u64::from(index < level % count)
}

/// The fuzz property of `--stages`: any text is a profile or one line of error, never a panic,
/// and a profile, written again (`Stages::written`, as the report shows it), reads back the
/// same.
pub fn check(s: &str) {
    match Stages::parse(s) {
        Ok(p) => {
            let again = Stages::parse(&p.written());
            assert_eq!(again.as_ref(), Ok(&p), "{s:?} written as {:?}", p.written());
        }
        Err(e) => assert!(e.starts_with("--stages") && !e.contains('\n'), "{e}"),
    }
}

/// A stage's rate (the part before `/s`) in requests per 1,000 s: 0 allowed (a ramp down).
fn milli_rate(s: &str, n: usize) -> Result<u64, String> {
    let t = s.trim();
    if t.chars().all(|c| c == '0' || c == '.') && t.contains('0') {
        return Ok(0);
    }
    let (num, den) = crate::units::rate(t).map_err(|e| format!("--stages: stage {n}: {e}"))?;
    let milli = u128::from(num) * 1000;
    if milli % u128::from(den) != 0 {
        return Err(format!(
            "--stages: stage {n}: {t}/s is finer than 0.001 requests per second"
        ));
    }
    let milli = milli / u128::from(den);
    if milli as f64 / 1000.0 > MAX_STAGE_RATE {
        return Err(format!(
            "--stages: stage {n}: {t}/s is more than {MAX_STAGE_RATE} requests per second"
        ));
    }
    Ok(milli as u64)
}

fn connections(s: &str, n: usize) -> Result<u64, String> {
    let c = crate::units::count(s).map_err(|e| format!("--stages: stage {n}: {e}"))?;
    if c > MAX_STAGE_CONNECTIONS {
        return Err(format!(
            "--stages: stage {n}: {c} connections, at most {MAX_STAGE_CONNECTIONS}"
        ));
    }
    Ok(c)
}

/// A rate profile's curve, in seconds from its start: each stage's start, length, rates at its
/// two ends, and the requests scheduled before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    segments: Vec<Segment>,
    /// The requests the whole profile schedules (its area), and its length.
    total: f64,
    end: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Segment {
    start: f64,
    len: f64,
    r0: f64,
    r1: f64,
    before: f64,
}

impl Segment {
    /// Requests scheduled in its first `tau` seconds.
    fn area(&self, tau: f64) -> f64 {
        let tau = tau.clamp(0.0, self.len);
        let a = (self.r1 - self.r0) / self.len;
        self.r0 * tau + a * tau * tau / 2.0
    }
}

impl Curve {
    /// The curve of a profile, scaled by `share` (a shard's part of the job's rate: 1/N): for
    /// rates, its area is requests; for connections, connection-seconds.
    pub fn of(stages: &Stages, share: f64) -> Curve {
        let (mut t, mut level, mut before) = (0.0, 0.0, 0.0);
        let mut segments = Vec::with_capacity(stages.stages.len());
        for s in &stages.stages {
            let to = s.value(stages.kind) * share;
            let len = s.duration.as_secs_f64();
            if len > 0.0 {
                let seg = Segment {
                    start: t,
                    len,
                    r0: level,
                    r1: to,
                    before,
                };
                before += seg.area(len);
                t += len;
                segments.push(seg);
            }
            level = to;
        }
        Curve {
            segments,
            total: before,
            end: t,
        }
    }

    /// Requests the curve schedules in its first `t` seconds (its area so far).
    pub fn count_before(&self, t: f64) -> f64 {
        if t >= self.end {
            return self.total;
        }
        // Few stages: a scan costs less than a search's branches.
        match self.segments.iter().rev().find(|s| s.start <= t) {
            Some(s) => s.before + s.area(t - s.start),
            None => 0.0,
        }
    }

    /// The time, in seconds from the start, at which the curve has scheduled `n` requests:
    /// request `n`'s intended time. `None` if the profile schedules fewer.
    pub fn time_of(&self, n: f64) -> Option<f64> {
        if n >= self.total {
            return None;
        }
        let s = self
            .segments
            .iter()
            .rev()
            .find(|s| s.before <= n && s.r0 + s.r1 > 0.0)?;
        let d = n - s.before;
        let a = (s.r1 - s.r0) / s.len;
        // The root of r0 tau + a tau^2 / 2 = d, written so that it does not cancel.
        let disc = (s.r0 * s.r0 + 2.0 * a * d).max(0.0);
        let tau = match s.r0 + disc.sqrt() {
            q if q > 0.0 => 2.0 * d / q,
            _ => 0.0,
        };
        Some(s.start + tau.min(s.len))
    }

    /// The requests the whole profile schedules.
    pub fn total(&self) -> f64 {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(s: &str) -> Stages {
        Stages::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn profiles_of_rates_and_of_connections_parse() {
        let p = parsed("30s:100/s, 1m:500/s,30s:0/s");
        assert_eq!(p.kind, StageKind::Rate);
        assert_eq!(p.duration(), Duration::from_secs(120));
        assert_eq!(p.stages[1].target, 500_000);
        assert_eq!(p.stages[2].target, 0);
        let c = parsed("10s:4,0s:32,10s:32,10s:8");
        assert_eq!(c.kind, StageKind::Connections);
        assert_eq!(c.peak(), 32);
        assert_eq!(parsed("1s:0.5/s").stages[0].target, 500);
    }

    #[test]
    fn bad_profiles_are_one_line_each() {
        for (bad, says) in [
            ("", "no stage"),
            ("30s", "not DUR:TARGET"),
            ("30s:100/s,30s:10", "mixes kinds"),
            ("30s:-5/s", "stage 1"),
            ("-1s:5/s", "stage 1"),
            ("0s:100/s", "last 0s"),
            ("10s:0/s,5s:0/s", "sends nothing"),
            ("10s:20000000/s", "more than"),
            ("10s:0.0001/s", "finer than"),
            ("10s:2000000", "at most"),
            ("400d:5/s", "too long"),
            ("200d:5/s,200d:5/s", "at most 365d"),
            ("10s:ten", "stage 1"),
        ] {
            let e = Stages::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
            assert!(e.starts_with("--stages"), "{e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
        let many = vec!["1s:1/s"; MAX_STAGES + 1].join(",");
        assert!(Stages::parse(&many).unwrap_err().contains("at most"));
    }

    #[test]
    fn a_profile_written_again_reads_back_the_same() {
        for s in [
            "30s:100/s,1m:500/s,30s:0/s",
            "1.5s:0.001/s,0s:2.5k/s,90m:1234.567/s",
            "10s:4,0s:32,1h:8",
            "0.000000001s:1/s,1s:1/s",
            "",
            "1s:1/s,",
            "\u{0}",
            "1s:1/s/s",
        ] {
            check(s);
        }
    }

    #[test]
    fn the_target_moves_linearly_and_jumps() {
        let p = parsed("10s:100/s,0s:300/s,10s:300/s,10s:0/s");
        let at = |s: f64| p.target_at(Duration::from_secs_f64(s));
        assert_eq!(at(0.0), 0.0);
        assert!((at(5.0) - 50.0).abs() < 1e-9);
        assert!((at(10.0) - 300.0).abs() < 1e-9, "the jump");
        assert!((at(25.0) - 150.0).abs() < 1e-9);
        assert_eq!(at(31.0), 0.0, "after the end");
        let stage = |s: f64| p.stage_at(Duration::from_secs_f64(s));
        assert_eq!(stage(0.0), Some((1, 4)));
        assert_eq!(stage(10.0), Some((3, 4)), "the jump lasts no time");
        assert_eq!(stage(29.9), Some((4, 4)));
        assert_eq!(stage(30.0), None);
    }

    /// Each second's scheduled requests are the curve's area over that second, within 1 % plus
    /// one request, for ramps up and down, plateaus and jumps, at µs and at second scales.
    #[test]
    fn each_seconds_requests_are_the_area_under_the_curve() {
        for spec in [
            "10s:1000/s",
            "5s:200/s,10s:200/s,5s:0/s",
            "0s:50/s,4s:50/s,0s:5000/s,3s:5000/s,6s:0/s",
            "3s:0.5/s,3s:2/s",
            "2s:1000000/s",
        ] {
            let p = parsed(spec);
            let curve = Curve::of(&p, 1.0);
            // Count the intended times second by second, from the inverse.
            let mut per_second = vec![0u64; p.duration().as_secs() as usize + 1];
            let mut i = 0u64;
            while let Some(t) = curve.time_of(i as f64) {
                per_second[t as usize] += 1;
                i += 1;
            }
            assert_eq!(i as f64, curve.total().ceil(), "{spec}");
            for (s, &got) in per_second.iter().enumerate() {
                let want = curve.count_before(s as f64 + 1.0) - curve.count_before(s as f64);
                assert!(
                    (got as f64 - want).abs() <= want * 0.01 + 1.0,
                    "{spec}: second {s}: {got} scheduled, the curve's area is {want}"
                );
            }
        }
    }

    #[test]
    fn the_whole_connections_follow_the_line_and_change_where_it_crosses() {
        let p = parsed("4s:4,0s:32,4s:32,6s:8,2s:8");
        let n = |s: f64| p.connections_at(Duration::from_secs_f64(s));
        assert_eq!((n(0.0), n(0.99), n(1.0), n(3.99)), (0, 0, 1, 3));
        assert_eq!(
            (n(4.0), n(7.9), n(8.0), n(11.0), n(13.9)),
            (32, 32, 32, 20, 8)
        );
        assert_eq!((n(15.9), n(16.0)), (8, 0), "after the end");
        // Walking from change to change sees every level once, in order, and ends.
        let mut at = Duration::ZERO;
        let mut seen = vec![n(0.0)];
        let mut steps = 0;
        while let Some(next) = p.next_change(at) {
            assert!(next >= at, "{next:?} before {at:?}");
            // The caller asks again at the change, or a hair after it when it read back short.
            at = next.max(at + Duration::from_micros(1));
            let level = p.connections_at(at);
            if seen.last() != Some(&level) {
                seen.push(level);
            }
            steps += 1;
            assert!(steps < 1000, "no end");
        }
        let mut want: Vec<u64> = (0..=4).collect();
        want.push(32);
        want.extend((8..32).rev());
        want.push(0);
        assert_eq!(seen, want);
        // A rise to one connection reaches it at its end (a hair before, read back as one).
        let one = parsed("2s:1,1s:1");
        let t = one.next_change(Duration::ZERO).unwrap();
        assert_eq!(t, Duration::from_secs(2) - Duration::from_micros(2));
        assert_eq!(one.connections_at(t), 1);
    }

    #[test]
    fn a_warm_up_holds_the_first_target_then_the_profile_starts_as_written() {
        let p = parsed("10s:100/s,10s:300/s");
        let w = p.after_warmup(Duration::from_secs(5));
        let at = |s: f64| w.target_at(Duration::from_secs_f64(s));
        assert_eq!(
            (at(0.0), at(4.9)),
            (100.0, 100.0),
            "the first stage's target"
        );
        assert!((at(10.0) - 50.0).abs() < 1e-9, "then from 0, as written");
        assert!((at(20.0) - 200.0).abs() < 1e-9);
        assert_eq!(w.duration(), p.duration() + Duration::from_secs(5));
        let curve = Curve::of(&w, 1.0);
        assert!(
            (curve.count_before(5.0) - 500.0).abs() < 1e-9,
            "the warm-up's requests"
        );
        assert_eq!(p.after_warmup(Duration::ZERO), p);
        let jump = parsed("0s:8,10s:8").after_warmup(Duration::from_secs(2));
        assert_eq!(jump.connections_at(Duration::from_secs(1)), 8);
        assert_eq!(
            jump.connections_at(Duration::from_secs(2)),
            8,
            "a jump stays one"
        );
    }

    #[test]
    fn the_mean_is_of_the_steps_the_run_keeps() {
        let p = parsed("0s:1,2s:1,6s:12");
        let s = |x: f64| Duration::from_secs_f64(x);
        // From 1 to 12 over 6 s: the line is at 2 after 6/11 s; one connection until then.
        let want = (6.0 / 11.0) + 2.0 * (1.0 - 6.0 / 11.0);
        let got = p.mean_connections(s(2.0), s(3.0), |l| l);
        assert!((got - want).abs() < 1e-4, "{got} {want}");
        assert!((p.mean_connections(s(0.0), s(2.0), |l| l) - 1.0).abs() < 1e-9);
        assert_eq!(
            p.mean_connections(s(8.0), s(8.0), |l| l),
            0.0,
            "after the end"
        );
        // Two shards' parts add up to the whole.
        let half = |i| move |l| striped(l, i, 2);
        let sum = p.mean_connections(s(2.0), s(8.0), half(0))
            + p.mean_connections(s(2.0), s(8.0), half(1));
        assert!((sum - p.mean_connections(s(2.0), s(8.0), |l| l)).abs() < 1e-6);
    }

    #[test]
    fn stripes_split_a_level_as_the_connections_are_split() {
        for level in 0..50u64 {
            for count in 1..7u64 {
                let parts: Vec<u64> = (0..count).map(|i| striped(level, i, count)).collect();
                assert_eq!(parts.iter().sum::<u64>(), level);
                for (i, &p) in parts.iter().enumerate() {
                    assert_eq!(p, crate::shard::part(level, i as u32, count as u32));
                    let mine = (0..level).filter(|k| k % count == i as u64).count() as u64;
                    assert_eq!(p, mine, "thing k is part k mod count's");
                }
            }
        }
    }

    #[test]
    fn times_increase_and_invert_the_count() {
        let curve = Curve::of(&parsed("2s:10/s,2s:10/s,2s:0/s"), 1.0);
        assert!((curve.total() - 40.0).abs() < 1e-9);
        let mut last = -1.0;
        for i in 0..40 {
            let t = curve.time_of(f64::from(i)).unwrap();
            assert!(t > last || i == 0, "{i}: {t} after {last}");
            assert!((curve.count_before(t) - f64::from(i)).abs() < 1e-6, "{i}");
            last = t;
        }
        assert_eq!(curve.time_of(40.0), None, "nothing after the end");
        // A shard's part of the job's rate.
        assert!((Curve::of(&parsed("2s:10/s"), 0.25).total() - 2.5).abs() < 1e-9);
    }
}
