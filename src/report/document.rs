//! `Report`: a run's numbers (`stats::Summary`) with what `analysis` judged of them and the
//! insight in words; the whole result as the JSON holds it and as every form renders it. Builds
//! nothing itself: numbers come from stats, judgements from analysis, words from `insight`.

use serde::{Deserialize, Serialize};

use super::insight::sentences;
use crate::analysis::{
    self, Comparison, Finding, Gates, Levels, Sample, SloSpec, StageVerdicts, Verdict,
};
use crate::plan::Plan;
use crate::stats::{HISTOGRAM_BINS, RunFailure, RunOutput, Summary};

/// How a run is judged and binned.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    /// `--slo`: targets for the colour levels and the PASS/FAIL verdicts.
    pub slo: SloSpec,
    pub hist_bins: usize,
    /// `--baseline`: the saved runs to compare with (none: no comparison).
    pub baseline: Vec<Sample>,
    /// `--max-regression`: how much worse than the baseline a metric may be.
    pub gates: Gates,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            slo: SloSpec::default(),
            hist_bins: HISTOGRAM_BINS,
            baseline: Vec::new(),
            gates: Gates::default(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Report {
    /// The numbers; their fields are the JSON's top level.
    pub run: Summary,
    /// The levels that colour the report; `None` without data or targets.
    pub levels: Option<Levels>,
    /// One verdict per `--slo` target, in the order of the report.
    pub thresholds: Vec<Verdict>,
    /// Against `--baseline`, gated by `--max-regression`.
    pub baseline: Option<Comparison>,
    /// `findings` in words, for people reading the JSON.
    pub insight: Vec<String>,
    /// What the insight rules found (docs/MEASUREMENT.md), for programs.
    pub findings: Vec<Finding>,
    /// `--stages`: where the service stopped keeping up, if it did.
    pub breaking_point: Option<analysis::BreakingPoint>,
    /// `--stages` with `--slo`: each stage judged on the targets (the run's verdicts and exit
    /// code stay the whole run's).
    pub stage_thresholds: Vec<StageVerdicts>,
}

/// The JSON document: the summary's fields and the judgements side by side, in the order of
/// docs/output-schema.json. Spelled out rather than `#[serde(flatten)]`, which would compile
/// every part of the summary a second time through serde's buffered path.
#[derive(Serialize)]
struct Wire<'a> {
    schema_version: u32,
    spate_version: &'a str,
    config: &'a crate::stats::Config,
    totals: &'a crate::stats::Totals,
    requests: &'a crate::stats::Requests,
    latency: &'a crate::stats::Latency,
    histogram: &'a [crate::stats::Bin],
    status_codes: &'a [crate::stats::StatusRow],
    errors: &'a [crate::stats::ErrorRow],
    phases: &'a crate::stats::Phases,
    connections: &'a crate::stats::Connections,
    generator: &'a crate::stats::Generator,
    levels: &'a Option<Levels>,
    thresholds: &'a [Verdict],
    baseline: &'a Option<Comparison>,
    insight: &'a [String],
    findings: &'a [Finding],
    open_model: &'a Option<crate::stats::OpenModel>,
    streaming: &'a Option<crate::stats::Streaming>,
    per_url: &'a [crate::stats::UrlRow],
    mcp: &'a Option<crate::stats::McpSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    grpc: &'a Option<crate::stats::GrpcSummary>,
    start_unix_ms: u64,
    timeline: &'a [crate::stats::timeline::Entry],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stages: &'a [crate::stats::StageRow],
    #[serde(skip_serializing_if = "Option::is_none")]
    breaking_point: &'a Option<analysis::BreakingPoint>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    stage_thresholds: &'a [StageVerdicts],
    error: &'a Option<RunFailure>,
}

impl Serialize for Report {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = &self.run;
        Wire {
            schema_version: r.schema_version,
            spate_version: &r.spate_version,
            config: &r.config,
            totals: &r.totals,
            requests: &r.requests,
            latency: &r.latency,
            histogram: &r.histogram,
            status_codes: &r.status_codes,
            errors: &r.errors,
            phases: &r.phases,
            connections: &r.connections,
            generator: &r.generator,
            levels: &self.levels,
            thresholds: &self.thresholds,
            baseline: &self.baseline,
            insight: &self.insight,
            findings: &self.findings,
            open_model: &r.open_model,
            streaming: &r.streaming,
            per_url: &r.per_url,
            mcp: &r.mcp,
            grpc: &r.grpc,
            start_unix_ms: r.start_unix_ms,
            timeline: &r.timeline,
            stages: &r.stages,
            breaking_point: &self.breaking_point,
            stage_thresholds: &self.stage_thresholds,
            error: &r.error,
        }
        .serialize(s)
    }
}

/// The judgements of a saved document (the summary is read from the same bytes; each ignores
/// the other's fields). Findings are not read back but found again from the numbers, by the
/// same rules: reading them would cost serde's buffered path for every kind (262 KB of binary).
#[derive(Deserialize)]
struct Judged {
    thresholds: Vec<Verdict>,
    baseline: Option<Comparison>,
    #[serde(default)]
    stage_thresholds: Vec<StageVerdicts>,
}

/// A report reads as the numbers it is made of (`report.requests`): the judgements are beside
/// them, not over them.
impl std::ops::Deref for Report {
    type Target = Summary;
    fn deref(&self) -> &Summary {
        &self.run
    }
}

impl Report {
    pub fn new(plan: &Plan, run: &RunOutput, opts: &ReportOptions) -> Report {
        let mut r = Report::of(Summary::new(plan, run, opts.hist_bins), &opts.slo);
        r.leave_slo_to_merge(&opts.slo);
        if !opts.baseline.is_empty() {
            r.baseline = Some(analysis::compare(&r.run, &opts.baseline, &opts.gates));
        }
        r
    }

    /// The result of a run that did not start, so that a program reading the JSON always finds
    /// a document, with `error` saying why.
    pub fn not_run(plan: &Plan, failure: RunFailure, opts: &ReportOptions) -> Report {
        let mut r = Report::of(Summary::not_run(plan, failure, opts.hist_bins), &opts.slo);
        r.leave_slo_to_merge(&opts.slo);
        r
    }

    /// A shard's part of a job is not judged on the job's targets (its rate is a part of the
    /// job's, its tail one part's): it records them for `spate merge`, which judges the job.
    fn leave_slo_to_merge(&mut self, slo: &SloSpec) {
        if let Some(sh) = self.run.config.shard.as_mut() {
            sh.slo = (!slo.is_empty()).then(|| slo.to_string());
            self.thresholds.clear();
            self.stage_thresholds.clear();
        }
    }

    pub fn of(run: Summary, slo: &SloSpec) -> Report {
        let mut a = analysis::analyse(&run, slo);
        let breaking_point = analysis::breaking(&run, analysis::p99_target(&slo.latency_ms()));
        a.findings
            .extend(breaking_point.clone().map(Finding::BreakingPoint));
        Report {
            insight: sentences(&a.findings),
            stage_thresholds: analysis::stage_verdicts(slo, &run.stages),
            run,
            levels: a.levels,
            thresholds: a.thresholds,
            baseline: None,
            findings: a.findings,
            breaking_point,
        }
    }

    /// A saved result (`to_json`'s document): its numbers and verdicts as saved, its findings
    /// found again from the numbers and said in words.
    pub fn from_json(bytes: &[u8]) -> serde_json::Result<Report> {
        let run: Summary = serde_json::from_slice(bytes)?;
        let j: Judged = serde_json::from_slice(bytes)?;
        let findings = analysis::findings(&run);
        // Made again from the numbers and the targets, as the run made them: a file's own words
        // cannot colour the report, and a file saved by an older spate reads the same.
        // A shard's targets are in its config, its thresholds left to `spate merge`.
        let mut targets = analysis::latency_targets(&j.thresholds);
        if targets.is_empty()
            && let Some(spec) = run
                .config
                .shard
                .as_ref()
                .and_then(|s| s.slo.as_deref())
                .and_then(|s| s.parse::<SloSpec>().ok())
        {
            targets = spec.latency_ms();
        }
        let levels = Levels::new(&run.latency.percentiles, &targets);
        let breaking_point = analysis::breaking(&run, analysis::p99_target(&targets));
        let mut findings = findings;
        findings.extend(breaking_point.clone().map(Finding::BreakingPoint));
        Ok(Report {
            insight: sentences(&findings),
            run,
            levels,
            thresholds: j.thresholds,
            baseline: j.baseline,
            findings,
            breaking_point,
            stage_thresholds: j.stage_thresholds,
        })
    }

    /// This report with every string in it escaped for a terminal (`escape::term`): what a
    /// server, a script or a saved file put there can neither move the cursor nor start a line
    /// of its own. Made through the JSON form, so that every string of every part is covered,
    /// including parts added later; spate's own strings have nothing to escape and read the same.
    /// `None` if the report does not read back as it was written (a figure JSON cannot hold).
    pub fn for_terminal(&self) -> Option<Report> {
        // Through bytes, as `to_json` and `from_json` go, so that no second serde path for
        // every part is compiled in.
        let bytes = serde_json::to_vec(self).ok()?;
        let mut doc: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
        escape_strings(&mut doc);
        let bytes = serde_json::to_vec(&doc).ok()?;
        let mut shown = Report::from_json(&bytes).ok()?;
        shown
            .run
            .second_latencies
            .clone_from(&self.run.second_latencies);
        Some(shown)
    }

    /// Every `--slo` target and `--max-regression` gate passed (true when there are none).
    pub fn thresholds_pass(&self) -> bool {
        self.thresholds.iter().all(|v| v.pass)
            && self.baseline.as_ref().is_none_or(Comparison::pass)
    }
}

/// Every string in `doc` (values, not keys) escaped for a terminal.
fn escape_strings(doc: &mut serde_json::Value) {
    use serde_json::Value;
    match doc {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(e) = crate::escape::term_str(s) {
                *s = e;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(escape_strings),
        Value::Object(o) => o.values_mut().for_each(escape_strings),
        _ => {}
    }
}
