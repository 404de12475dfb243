//! `spate sweep`'s report: a row per concurrency level (throughput and tail), the knee and
//! what lies past it, the overhead against a --vs reference at each level; as text, as a
//! markdown table to paste, or as JSON (docs/sweep-schema.json).

use std::fmt::Write as _;

use serde::Serialize;

use crate::analysis::{
    Figures, KNEE_MAX_ERRORS_PCT, KNEE_SHARE, Knee, Level, Sweep, TAIL_MIN_MS, TAIL_RATIO,
};
use crate::numbers::{millis, per_second};
use crate::plan::{Plan, Stop};

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), millis)
}

/// What the last column says of a level, in every form of the report: "knee", "errors"
/// (not counted towards the peak), "tail" (a long tail, counted), or several.
pub(super) fn mark(l: &Level, knee: Option<u32>) -> String {
    let mut parts = Vec::new();
    if knee == Some(l.connections) {
        parts.push("knee");
    }
    if l.excluded.is_some() {
        parts.push("errors");
    }
    if l.tail.is_some() {
        parts.push("tail");
    }
    parts.join(", ")
}

/// What "errors" and "tail" mean, for the levels that have them.
pub(super) fn mark_notes(s: &Sweep) -> Vec<String> {
    let mut notes = Vec::new();
    if s.levels.iter().any(|l| l.excluded.is_some()) {
        notes.push(format!(
            "errors: no response or over {KNEE_MAX_ERRORS_PCT} % errors; not counted towards the peak."
        ));
    }
    if s.levels.iter().any(|l| l.tail.is_some()) {
        notes.push(format!(
            "tail: p99 over {TAIL_RATIO} times p50 and over {} above it; counted.",
            millis(TAIL_MIN_MS)
        ));
    }
    notes
}

/// A level's rate, p50, p90, p99, p99.9 and errors, as shown.
fn cells(f: &Figures) -> [String; 6] {
    [
        per_second(f.rps),
        ms(f.p50_ms),
        ms(f.p90_ms),
        ms(f.p99_ms),
        ms(f.p999_ms),
        f.errors_pct.map_or("-".into(), |e| format!("{e:.2} %")),
    ]
}

/// "+0.210 ms", "-1.003 ms".
fn delta(v: Option<f64>) -> String {
    v.map_or("-".into(), |d| {
        let sign = if d < 0.0 { '-' } else { '+' };
        format!("{sign}{}", millis(d.abs()))
    })
}

fn ratio(v: Option<f64>) -> String {
    v.map_or("-".into(), |r| format!("{r:.2}x"))
}

/// How long each level ran: "-z 2s" or "-n 10,000".
pub fn each(plan: &Plan) -> String {
    match plan.stop {
        Stop::Duration(d) => format!("-z {}", humantime(d)),
        Stop::Requests(n) => format!("-n {}", crate::numbers::count(n)),
    }
}

fn humantime(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// The knee in words (`who`: "Knee" or "The reference's knee"): where it is and what lies
/// past it.
fn knee_text(o: &mut String, who: &str, k: &Knee, last: u32) -> std::fmt::Result {
    let peak = if k.peak_connections == k.connections {
        String::new()
    } else {
        format!(
            " (the peak: {} req/s at {})",
            per_second(k.peak_rps),
            k.peak_connections
        )
    };
    writeln!(
        o,
        "{who}: {}, the fewest connections reaching {:.0} % of the peak rate:\n  {} req/s{peak}, \
         p99 {}.",
        k.connections,
        KNEE_SHARE * 100.0,
        per_second(k.rps),
        ms(k.p99_ms)
    )?;
    match k.last {
        Some(past) => {
            let queue = past.rps_ratio < 1.1 && past.p99_ratio.is_some_and(|r| r > 2.0);
            writeln!(
                o,
                "  At {} connections: {:.2}x its rate, {} its p99{}.",
                past.connections,
                past.rps_ratio,
                ratio(past.p99_ratio),
                if queue { ": they wait in a queue" } else { "" }
            )
        }
        None if k.connections == last => writeln!(
            o,
            "  The peak was at the last level: the knee may lie beyond; sweep further."
        ),
        None => Ok(()),
    }
}

pub fn text(s: &Sweep, url: &str, vs: Option<&str>, plan: &Plan) -> String {
    let mut o = String::new();
    let _ = write_text(&mut o, s, url, vs, plan);
    o
}

fn write_text(
    o: &mut String,
    s: &Sweep,
    url: &str,
    vs: Option<&str>,
    plan: &Plan,
) -> std::fmt::Result {
    writeln!(
        o,
        "spate sweep: {url}, {}, each {}",
        crate::numbers::counted(s.levels.len() as u64, "level", "levels"),
        each(plan)
    )?;
    writeln!(
        o,
        "\n{:>6}  {:>11}{:>11}{:>11}{:>11}{:>11}{:>9}",
        "conns", "req/s", "p50", "p90", "p99", "p99.9", "errors"
    )?;
    let knee = s.knee.map(|k| k.connections);
    for l in &s.levels {
        let f = &l.figures;
        let [rps, p50, p90, p99, p999, errors] = cells(f);
        let line = format!(
            "{:>6}  {rps:>11}{p50:>11}{p90:>11}{p99:>11}{p999:>11}{errors:>9}  {}",
            l.connections,
            mark(l, knee)
        );
        writeln!(o, "{}", line.trim_end())?;
    }
    let last = s.levels.last().map_or(0, |l| l.connections);
    writeln!(o)?;
    match &s.knee {
        Some(k) => knee_text(o, "Knee", k, last)?,
        None => writeln!(
            o,
            "No knee: every level had no response or more than {KNEE_MAX_ERRORS_PCT} % of errors."
        )?,
    }
    for note in mark_notes(s) {
        writeln!(o, "{note}")?;
    }
    if let Some(vs) = vs {
        writeln!(
            o,
            "\nAgainst {vs}, run at each level too (alternately):\n\n\
             {:>6}  {:>11}{:>11}{:>8}{:>12}{:>12}",
            "conns", "req/s", "vs req/s", "ratio", "p50 added", "p99 added"
        )?;
        for l in &s.levels {
            let (Some(r), Some(d)) = (&l.vs, &l.overhead) else {
                continue;
            };
            writeln!(
                o,
                "{:>6}  {:>11}{:>11}{:>8}{:>12}{:>12}",
                l.connections,
                per_second(l.figures.rps),
                per_second(r.rps),
                ratio(d.rps_ratio),
                delta(d.p50_ms),
                delta(d.p99_ms)
            )?;
        }
        writeln!(
            o,
            "\nratio: the target's rate over the reference's; added: the target's percentile\n\
             minus the reference's."
        )?;
        if let Some(k) = &s.vs_knee {
            knee_text(o, "The reference's knee", k, last)?;
        }
    }
    if !s.spate_limited.is_empty() {
        let at: Vec<String> = s.spate_limited.iter().map(u32::to_string).collect();
        writeln!(
            o,
            "\nspate itself may have limited the run at {} connections (its insight says so;\n\
             --save-dir keeps each run's report): the figures there may be spate's.",
            at.join(", ")
        )?;
    }
    Ok(())
}

/// A row per level; with --vs, the reference's rate and the overhead.
pub fn markdown(s: &Sweep, url: &str, vs: Option<&str>) -> String {
    let mut o = String::from("| connections | req/s | p50 | p90 | p99 | p99.9 | errors |");
    if vs.is_some() {
        o.push_str(" vs req/s | ratio | p50 added | p99 added |");
    }
    o.push_str("\n|---:|---:|---:|---:|---:|---:|---:|");
    if vs.is_some() {
        o.push_str("---:|---:|---:|---:|");
    }
    o.push('\n');
    let knee = s.knee.map(|k| k.connections);
    for l in &s.levels {
        let f = &l.figures;
        let mark = match mark(l, knee) {
            m if m.is_empty() => m,
            m => format!(" ({m})"),
        };
        let _ = write!(o, "| {}{mark} | {} |", l.connections, cells(f).join(" | "));
        if let (Some(r), Some(d)) = (&l.vs, &l.overhead) {
            let _ = write!(
                o,
                " {} | {} | {} | {} |",
                per_second(r.rps),
                ratio(d.rps_ratio),
                delta(d.p50_ms),
                delta(d.p99_ms)
            );
        }
        o.push('\n');
    }
    let _ = write!(o, "\nspate sweep of {}", url.replace('|', "\\|"));
    if let Some(vs) = vs {
        let _ = write!(o, " against {}", vs.replace('|', "\\|"));
    }
    let _ = writeln!(
        o,
        "; the knee is the fewest connections reaching {:.0} % of the peak rate.",
        KNEE_SHARE * 100.0
    );
    o
}

/// The sweep for programs, as docs/sweep-schema.json describes it.
#[derive(Serialize)]
struct Wire<'a> {
    schema_version: u32,
    spate_version: &'a str,
    url: &'a str,
    vs: Option<&'a str>,
    #[serde(flatten)]
    sweep: &'a Sweep,
}

/// Bumped whenever a field of the sweep's JSON changes meaning or disappears.
pub const SWEEP_SCHEMA_VERSION: u32 = 1;

pub fn json(s: &Sweep, url: &str, vs: Option<&str>) -> String {
    let wire = Wire {
        schema_version: SWEEP_SCHEMA_VERSION,
        spate_version: env!("CARGO_PKG_VERSION"),
        url,
        vs,
        sweep: s,
    };
    // Plain structs of numbers and strings cannot fail to serialize.
    serde_json::to_string_pretty(&wire).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Knee;
    use crate::target::Target;

    fn level(connections: u32, rps: f64, p50: f64, p99: f64, errors: f64) -> (u32, Figures) {
        let f = Figures {
            rps,
            p50_ms: Some(p50),
            p90_ms: Some(p99),
            p99_ms: Some(p99),
            p999_ms: Some(p99),
            errors_pct: Some(errors),
            cpu_us: None,
            spate_limited: false,
        };
        (connections, f)
    }

    /// The caddy case in every form: a fast server whose p99 is many times its p50 at the
    /// levels that made the most; the knee is there, the long tail is marked beside it.
    #[test]
    fn the_knee_comes_from_every_level_without_errors_and_tails_are_marked() {
        let raw = [
            level(1, 26_700.0, 0.03, 0.05, 0.0),
            level(50, 52_000.0, 0.2, 3.0, 0.0),
            level(100, 53_000.0, 0.4, 4.5, 0.0),
            level(200, 90_000.0, 0.5, 1.0, 40.0),
        ];
        let levels: Vec<Level> = raw
            .iter()
            .map(|(c, f)| Level {
                connections: *c,
                figures: *f,
                vs: None,
                overhead: None,
                excluded: f.excluded(),
                tail: f.tail(),
            })
            .collect();
        let knee: Option<Knee> = crate::analysis::knee(&raw);
        let s = Sweep {
            levels,
            knee,
            vs_knee: None,
            spate_limited: Vec::new(),
        };
        let plan = Plan::new(Target::parse("http://127.0.0.1:8080/").unwrap());
        let t = text(&s, "http://127.0.0.1:8080/", None, &plan);
        let row = |c: &str| {
            t.lines()
                .find(|l| l.split_whitespace().next() == Some(c))
                .unwrap()
                .to_string()
        };
        assert!(row("50").ends_with("knee, tail"), "{t}");
        assert!(row("100").ends_with("  tail"), "{t}");
        assert!(row("200").ends_with("  errors"), "{t}");
        assert!(!row("1").ends_with("knee"), "{t}");
        assert!(t.contains("Knee: 50,"), "{t}");
        assert!(t.contains("(the peak: 53,000.0 req/s at 100)"), "{t}");
        assert!(
            t.contains("errors: no response or over 1 % errors; not counted"),
            "{t}"
        );
        assert!(
            t.contains("tail: p99 over 10 times p50 and over 1.000 ms above it; counted."),
            "{t}"
        );
        let md = markdown(&s, "http://127.0.0.1:8080/", None);
        assert!(md.contains("| 50 (knee, tail) |"), "{md}");
    }
}
