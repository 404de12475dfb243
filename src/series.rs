//! One ordinary run after another for the commands that make a series of them (`spate compare`,
//! `spate sweep`): Ctrl-C ends the series after the run in progress, whose part-run is left
//! out; each run's JSON may be kept; a line on stderr after each. Judges nothing.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::engine::{self, Control, RunError};
use crate::exit::{EXIT_NO_SUCCESS, EXIT_USAGE};
use crate::numbers::{millis, per_second};
use crate::plan::Plan;
use crate::report::{self, Report, ReportOptions};
use crate::script::Loaded;
use crate::stats::Summary;
use crate::ui;

/// Why a series ended before its last run.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// Ctrl-C, SIGTERM or SIGHUP: judge the runs so far, if enough.
    Interrupted,
    /// A run could not be made or its JSON not kept; the line is printed: exit with this code.
    Failed(u8),
}

pub struct Series {
    /// "spate compare": the start of every line printed.
    who: &'static str,
    stop: Arc<AtomicBool>,
    save_dir: Option<PathBuf>,
    progress: bool,
    done: usize,
    total: usize,
}

impl Series {
    /// A series of `total` runs; installs the Ctrl-C handler.
    pub fn new(
        who: &'static str,
        total: usize,
        save_dir: Option<PathBuf>,
        progress: bool,
    ) -> Series {
        let stop = Arc::new(AtomicBool::new(false));
        if let Err(e) = ui::install_signal_handlers(stop.clone()) {
            crate::ui::say(&format!("{who}: cannot install the Ctrl-C handler ({e})"));
        }
        Series {
            who,
            stop,
            save_dir,
            progress,
            done: 0,
            total,
        }
    }

    /// Runs `plan` (with `script`, the one it names, loaded): `name` names it in messages ("fast", "c=8"), after `step` in the progress
    /// line ("round 2 "); `file` is the name of its JSON in the --save-dir (without ".json").
    pub fn run(
        &mut self,
        step: &str,
        name: &str,
        file: &str,
        plan: &Plan,
        script: Option<&Loaded>,
    ) -> Result<Summary, Ended> {
        let who = self.who;
        let control = Control::with_stop(self.stop.clone());
        let out = match engine::run_with(plan, script, &control) {
            Ok(out) => out,
            Err(_) if control.stop_requested() => return Err(Ended::Interrupted),
            Err(e) => {
                crate::ui::say(&format!("{who}: {name}: {e}"));
                return Err(Ended::Failed(match e {
                    RunError::Plan(_)
                    | RunError::Tls(_)
                    | RunError::Request(_)
                    | RunError::FileLimit(_) => EXIT_USAGE,
                    _ => EXIT_NO_SUCCESS,
                }));
            }
        };
        if control.stop_requested() {
            return Err(Ended::Interrupted);
        }
        if let Some(e) = &out.script_error {
            crate::ui::say(&format!("{who}: {name}: {e}"));
            return Err(Ended::Failed(EXIT_USAGE));
        }
        let r = Report::new(plan, &out, &ReportOptions::default());
        if let Some(dir) = &self.save_dir {
            let path = dir.join(format!("{}.json", file_name(file)));
            if let Err(e) = report::save::write(&path, (report::to_json(&r) + "\n").as_bytes()) {
                crate::ui::say(&format!("{who}: --save-dir {}: {e}", path.display()));
                return Err(Ended::Failed(EXIT_USAGE));
            }
        }
        self.done += 1;
        if self.progress {
            let p = &r.latency.percentiles;
            crate::ui::say(&format!(
                "{who}: {}/{} {step}{name}: {} req/s, p50 {}, p99 {}",
                self.done,
                self.total,
                per_second(r.totals.requests_per_sec),
                p.p50.map_or("-".into(), millis),
                p.p99.map_or("-".into(), millis),
            ));
        }
        Ok(r.run)
    }
}

/// A name as a file name: anything but letters, digits, '.', '-' and '_' becomes '_'.
/// The two first names of `names` whose runs would be saved to one file of a --save-dir (their
/// file names are the same, or differ only in case, as they would on a file system that folds
/// case).
pub fn same_file<'a>(names: &[&'a str]) -> Option<(&'a str, &'a str)> {
    let files: Vec<String> = names
        .iter()
        .map(|n| file_name(n).to_ascii_lowercase())
        .collect();
    (0..names.len()).find_map(|j| {
        (0..j)
            .find(|&i| files[i] == files[j])
            .map(|i| (names[i], names[j]))
    })
}

fn file_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_become_file_names() {
        assert_eq!(super::file_name("127.0.0.1:80#2-1"), "127.0.0.1_80_2-1");
    }

    #[test]
    fn names_that_would_share_a_file_are_found() {
        use super::same_file;
        assert_eq!(same_file(&["a", "b", "c:1"]), None);
        for (a, b) in [
            ("新", "旧"),
            ("x:1", "x_1"),
            ("a/b", "a_b"),
            ("Fast", "fast"),
        ] {
            assert_eq!(same_file(&["ok", a, b]), Some((a, b)));
        }
    }
}
