//! `spate merge`: the results of a job's shards (`--shard`, their JSON) added into the job's.
//! Latency histograms are added exactly (HdrHistogram, one configuration everywhere); counts,
//! status codes, failure classes and bytes are summed; the timelines are aligned on the job's
//! seconds; the rate is over the job's window, from the first shard's start to the last one's
//! end; the start skew and a row per shard are kept. Shards of different jobs, a missing or
//! repeated shard, or a result that is not a shard's are refused unless forced. Reads no
//! files and prints nothing.

mod slo;
mod stages;

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::analysis::{SloSpec, StageVerdicts, Verdict};
use crate::stats::{
    ErrorRow, HIST_HIGH_NS, HIST_LOW_NS, HIST_SIGFIG, Latency, Requests, StageRow, StatusRow,
    Summary, from_base64_v2,
};

/// Bumped whenever a field of the merged document changes meaning or disappears.
pub const SCHEMA_VERSION: u32 = 1;

/// A skew of the starts longer than this share of the job's window is worth a warning: the
/// rate over the window is then lower than the shards' load by up to that much.
pub const SKEW_WARN_SHARE: f64 = 0.01;

/// The job the shards ran, as each was given it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Job {
    pub url: String,
    pub method: String,
    pub model: String,
    pub shards: u32,
    pub connections: u64,
    pub requests: Option<u64>,
    pub duration_s: Option<f64>,
    /// Open model: requests per second (under --stages, the profile's mean).
    pub rate: Option<f64>,
    /// `--stages`: the profile, as the shards were given it.
    pub stages: Option<String>,
}

/// When the shards started.
#[derive(Debug, Clone, Serialize)]
pub struct Start {
    /// `--start-at`, where the shards had one (the first shard's).
    pub planned_unix_us: Option<u64>,
    pub first_unix_us: u64,
    pub last_unix_us: u64,
    /// The last start minus the first.
    pub skew_ms: f64,
}

/// The job's window: from the first shard's measured window's start to the last one's end.
#[derive(Debug, Clone, Serialize)]
pub struct Window {
    pub start_unix_ms: u64,
    pub end_unix_ms: u64,
    pub elapsed_s: f64,
}

/// One shard's own figures.
#[derive(Debug, Clone, Serialize)]
pub struct ShardRow {
    /// Its index (`--shard I/N`); null for a result that is not a shard's (--force).
    pub index: Option<u32>,
    /// The file it came from.
    pub file: String,
    pub connections: u32,
    pub completed: u64,
    pub failed: u64,
    pub requests_per_sec: f64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// Its start after the first shard's.
    pub start_offset_ms: f64,
    /// Its start after `--start-at`, where it had one.
    pub late_ms: Option<f64>,
}

/// One second of the job: the shards' entries that began in it, summed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Second {
    /// Seconds from the job's window start.
    pub t_s: u64,
    pub completed: u64,
    /// Of `completed`, the responses with a status of 400 or more.
    pub error_status: u64,
    pub failed: u64,
    pub sent: u64,
    pub bytes_in: u64,
    /// Open model: requests due in it; null in the closed model.
    pub scheduled: Option<u64>,
}

/// The job's result.
#[derive(Debug, Clone, Serialize)]
pub struct Merged {
    pub schema_version: u32,
    pub spate_version: String,
    pub job: Job,
    pub start: Start,
    pub window: Window,
    /// Responses completed within the shards' windows, per second of the job's window.
    pub requests_per_sec: f64,
    pub requests: Requests,
    pub latency: Latency,
    pub status_codes: Vec<StatusRow>,
    pub errors: Vec<ErrorRow>,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub shards: Vec<ShardRow>,
    pub timeline: Vec<Second>,
    /// `--stages`: the job's row per stage, the shards' rows added; absent without a profile.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageRow>,
    /// `--stages` with targets: each stage of the job judged on them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stage_thresholds: Vec<StageVerdicts>,
    /// What the reader should know before trusting the figures, one sentence each.
    pub warnings: Vec<String>,
    /// `--force`: checks that failed were let through (each is in `warnings`).
    pub forced: bool,
    /// The targets the job was judged on: `spate merge --slo`, or those the shards recorded;
    /// null when none.
    pub slo: Option<String>,
    /// One verdict per target, on the job's figures (its merged latency, its error rate, its
    /// rate over the window).
    pub thresholds: Vec<Verdict>,
}

/// Merges the results `runs` (named by their files), in the order given; one line saying why
/// not where they are not the shards of one job (unless `force`: then a warning). The job is
/// judged on `slo`, or on the targets its shards recorded (`--slo` given to each).
pub fn merge(
    runs: &[(String, Summary)],
    force: bool,
    slo: Option<&SloSpec>,
) -> Result<Merged, String> {
    let mut warnings = Vec::new();
    let mut refuse = |why: String| -> Result<(), String> {
        match force {
            true => {
                warnings.push(format!("{why} (merged anyway: --force)"));
                Ok(())
            }
            false => Err(why),
        }
    };
    let mut kept: Vec<&(String, Summary)> = Vec::new();
    for r @ (name, s) in runs {
        if let Some(e) = &s.error {
            refuse(format!(
                "{name}: the shard did not run ({}: {})",
                e.kind, e.message
            ))?;
            continue;
        }
        if s.config.shard.is_none() {
            refuse(format!(
                "{name}: not a shard's result (a run with --shard writes one)"
            ))?;
        }
        kept.push(r);
    }
    let Some((first_name, first)) = kept.first().map(|r| (&r.0, &r.1)) else {
        return Err("no shard that ran: nothing to merge".into());
    };
    let job = job_of(first, kept.len());
    for (name, s) in &kept[1..] {
        if let Some(field) = differs(&job, &job_of(s, kept.len())) {
            refuse(format!(
                "{name}: its {field} differs from {first_name}'s: they are not shards of one job"
            ))?;
        }
    }
    let mut seen = BTreeMap::new();
    for (name, s) in &kept {
        if let Some(sh) = &s.config.shard
            && let Some(other) = seen.insert(sh.index, name)
        {
            refuse(format!("{name} and {other} are both shard {}", sh.index))?;
        }
    }
    if first.config.shard.is_some() {
        let missing: Vec<String> = (0..job.shards)
            .filter(|i| !seen.contains_key(i))
            .map(|i| i.to_string())
            .collect();
        if !missing.is_empty() {
            refuse(format!(
                "shard {} of {} missing: the figures would not be the job's",
                missing.join(", "),
                job.shards
            ))?;
        }
    }
    let spec = match slo::targets(&kept, slo) {
        Ok((spec, warning)) => {
            warnings.extend(warning);
            spec
        }
        Err(why) => {
            refuse(why)?;
            None
        }
    };
    let latency = latency(&kept)?;
    let started = |s: &Summary| {
        s.config
            .started_unix_us
            .unwrap_or(s.start_unix_ms.saturating_mul(1000))
    };
    let first_start = kept.iter().map(|r| started(&r.1)).min().unwrap_or(0);
    let last_start = kept.iter().map(|r| started(&r.1)).max().unwrap_or(0);
    let window_start = kept.iter().map(|r| window_us(&r.1)).min().unwrap_or(0);
    let end_us = |s: &Summary| window_us(s) as f64 + s.totals.elapsed_s * 1e6;
    let window_end = kept.iter().map(|r| end_us(&r.1)).fold(0.0, f64::max);
    let elapsed_s = ((window_end - window_start as f64) / 1e6).max(0.0);
    // Each result's counts agree with each other (`Summary::inconsistency`, checked as it was
    // read): with the job's attempts within a u64, so is every sum of the requests' counts.
    kept.iter()
        .try_fold(0u64, |n, r| n.checked_add(r.1.requests.attempted))
        .ok_or("the shards' attempts add up past what a count holds: not one job's results")?;
    let in_window: u64 = kept
        .iter()
        .map(|r| r.1.requests.completed - r.1.totals.completed_in_drain)
        .sum();
    let skew_ms = (last_start - first_start) as f64 / 1e3;
    if kept.len() > 1 && elapsed_s > 0.0 && skew_ms / 1e3 > SKEW_WARN_SHARE * elapsed_s {
        warnings.push(format!(
            "the shards started {skew_ms:.1} ms apart, {:.1} % of the job's window: the rate \
             over the window is below what the shards sent together",
            100.0 * skew_ms / 1e3 / elapsed_s
        ));
    }
    let shards = kept
        .iter()
        .map(|(name, s)| ShardRow {
            index: s.config.shard.as_ref().map(|sh| sh.index),
            file: name.clone(),
            connections: s.config.connections,
            completed: s.requests.completed,
            failed: s.requests.failed,
            requests_per_sec: s.totals.requests_per_sec,
            p50_ms: s.latency.percentiles.p50,
            p99_ms: s.latency.percentiles.p99,
            start_offset_ms: (started(s) - first_start) as f64 / 1e3,
            late_ms: s
                .config
                .start_at_unix_us
                .map(|at| (started(s) as f64 - at as f64) / 1e3),
        })
        .collect();
    let requests = requests(&kept);
    let requests_per_sec = match elapsed_s > 0.0 {
        true => in_window as f64 / elapsed_s,
        false => 0.0,
    };
    let thresholds = slo::judged(spec.as_ref(), &latency, &requests, requests_per_sec);
    let (stage_rows, stage_warning) = stages::rows(&kept);
    warnings.extend(stage_warning);
    let stage_thresholds = spec.as_ref().map_or_else(Vec::new, |s| {
        crate::analysis::stage_verdicts(s, &stage_rows)
    });
    Ok(Merged {
        schema_version: SCHEMA_VERSION,
        spate_version: env!("CARGO_PKG_VERSION").into(),
        start: Start {
            planned_unix_us: first.config.start_at_unix_us,
            first_unix_us: first_start,
            last_unix_us: last_start,
            skew_ms,
        },
        window: Window {
            start_unix_ms: window_start / 1000,
            end_unix_ms: (window_end / 1e3).round() as u64,
            elapsed_s,
        },
        requests_per_sec,
        requests,
        latency,
        status_codes: status_codes(&kept),
        errors: errors(&kept),
        bytes_in: total(kept.iter().map(|r| r.1.totals.bytes_in)),
        bytes_out: total(kept.iter().map(|r| r.1.totals.bytes_out)),
        shards,
        timeline: timeline(&kept, window_start),
        stages: stage_rows,
        stage_thresholds,
        job,
        warnings,
        forced: force,
        slo: spec.map(|s| s.to_string()),
        thresholds,
    })
}

/// The sum of counts that no check ties together (bytes, seconds of a timeline): at most
/// `u64::MAX`, never wrapped.
fn total(counts: impl Iterator<Item = u64>) -> u64 {
    counts.fold(0, u64::saturating_add)
}

/// When `s`'s measured window began, µs since the Unix epoch: its start signal plus its
/// warm-up (a result without the start signal's µs has only the window's ms).
fn window_us(s: &Summary) -> u64 {
    match s.config.started_unix_us {
        Some(us) => us.saturating_add((s.config.warmup_s * 1e6).round() as u64),
        None => s.start_unix_ms.saturating_mul(1000),
    }
}

fn job_of(s: &Summary, files: usize) -> Job {
    let c = &s.config;
    match &c.shard {
        Some(sh) => Job {
            url: c.url.clone(),
            method: c.method.clone(),
            model: c.model.clone(),
            shards: sh.count,
            connections: u64::from(sh.job_connections),
            requests: sh.job_requests,
            duration_s: c.duration_s,
            rate: sh.job_rate,
            stages: c.stages.clone(),
        },
        // Runs that were not shards (--force): the job is what they ran together.
        None => Job {
            url: c.url.clone(),
            method: c.method.clone(),
            model: c.model.clone(),
            shards: files as u32,
            connections: u64::from(c.connections) * files as u64,
            requests: c.requests.map(|n| n * files as u64),
            duration_s: c.duration_s,
            rate: c.rate.map(|r| r * files as f64),
            stages: c.stages.clone(),
        },
    }
}

/// The first field in which two shards' jobs differ.
fn differs(a: &Job, b: &Job) -> Option<&'static str> {
    [
        (a.url != b.url, "URL"),
        (a.method != b.method, "method"),
        (a.model != b.model, "model"),
        (a.shards != b.shards, "shard count"),
        (a.connections != b.connections, "job's connections"),
        (a.requests != b.requests, "job's requests (-n)"),
        (a.duration_s != b.duration_s, "duration (-z)"),
        (a.rate != b.rate, "job's rate (-q)"),
        (a.stages != b.stages, "--stages"),
    ]
    .into_iter()
    .find_map(|(d, field)| d.then_some(field))
}

/// The shards' latency histograms added.
fn latency(runs: &[&(String, Summary)]) -> Result<Latency, String> {
    let mut sum = Histogram::<u64>::new_with_bounds(HIST_LOW_NS, HIST_HIGH_NS, HIST_SIGFIG)
        .expect("constant histogram bounds are valid");
    for (name, s) in runs {
        if s.latency.count == 0 {
            continue;
        }
        let h = from_base64_v2(&s.latency.hdr_base64)
            .ok_or_else(|| format!("{name}: its latency histogram (hdr_base64) cannot be read"))?;
        sum.add(&h)
            .map_err(|e| format!("{name}: its latency histogram cannot be added: {e:?}"))?;
    }
    Ok(Latency::of(
        &sum,
        total(runs.iter().map(|r| r.1.latency.clamped)),
    ))
}

fn requests(runs: &[&(String, Summary)]) -> Requests {
    let mut t = Requests::default();
    for (_, s) in runs {
        let r = &s.requests;
        t.attempted += r.attempted;
        t.completed += r.completed;
        t.successful += r.successful;
        t.error_status += r.error_status;
        t.failed += r.failed;
        t.interrupted += r.interrupted;
        t.retried = t.retried.saturating_add(r.retried);
        t.redirects_followed = t.redirects_followed.saturating_add(r.redirects_followed);
    }
    t
}

fn status_codes(runs: &[&(String, Summary)]) -> Vec<StatusRow> {
    let mut by: BTreeMap<u16, u64> = BTreeMap::new();
    for (_, s) in runs {
        for r in &s.status_codes {
            let n = by.entry(r.code).or_default();
            *n = n.saturating_add(r.count);
        }
    }
    by.into_iter()
        .map(|(code, count)| StatusRow { code, count })
        .collect()
}

fn errors(runs: &[&(String, Summary)]) -> Vec<ErrorRow> {
    let mut by: BTreeMap<String, ErrorRow> = BTreeMap::new();
    for (_, s) in runs {
        for e in &s.errors {
            let row = by.entry(e.class.clone()).or_insert_with(|| ErrorRow {
                class: e.class.clone(),
                count: 0,
                example: e.example.clone(),
            });
            row.count = row.count.saturating_add(e.count);
        }
    }
    let mut out: Vec<ErrorRow> = by.into_values().collect();
    out.sort_by(|a, b| b.count.cmp(&a.count).then(a.class.cmp(&b.class)));
    out
}

/// Each shard's seconds placed on the job's: an entry counts in the second of the job's window
/// in which it began.
fn timeline(runs: &[&(String, Summary)], window_start_us: u64) -> Vec<Second> {
    let mut by: BTreeMap<u64, Second> = BTreeMap::new();
    for (_, s) in runs {
        let offset_s = window_us(s).saturating_sub(window_start_us) as f64 / 1e6;
        for e in &s.timeline {
            let t = (offset_s + e.t_s + 1e-9).floor() as u64;
            let sec = by.entry(t).or_insert_with(|| Second {
                t_s: t,
                ..Second::default()
            });
            sec.completed = sec.completed.saturating_add(e.completed);
            sec.error_status = sec.error_status.saturating_add(e.error_status);
            sec.failed = sec.failed.saturating_add(e.failed);
            sec.sent = sec.sent.saturating_add(e.sent);
            sec.bytes_in = sec.bytes_in.saturating_add(e.bytes_in);
            if let Some(n) = e.scheduled {
                let s = sec.scheduled.get_or_insert(0);
                *s = s.saturating_add(n);
            }
        }
    }
    by.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_differ_in_the_first_field_that_is_not_the_same() {
        let a = Job {
            url: "http://127.0.0.1:1/".into(),
            method: "GET".into(),
            model: "open".into(),
            shards: 4,
            connections: 100,
            requests: None,
            duration_s: Some(60.0),
            rate: Some(1000.0),
            stages: None,
        };
        assert_eq!(differs(&a, &a.clone()), None);
        let faster = Job {
            rate: Some(2000.0),
            ..a.clone()
        };
        assert_eq!(differs(&a, &faster), Some("job's rate (-q)"));
        let elsewhere = Job {
            url: "http://127.0.0.1:2/".into(),
            shards: 3,
            ..a.clone()
        };
        assert_eq!(differs(&a, &elsewhere), Some("URL"));
    }
}
