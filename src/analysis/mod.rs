//! Judgements derived from a run's numbers: the SLO colour levels, the `--slo` verdicts and the
//! insight sentences. Pure functions of plain data: no IO, no terminal, no clock.

mod fairness;
mod generator;
mod insight;
mod levels;
mod ports;
mod slo;

pub use fairness::starved;
pub use insight::{Facts, STALL_MS, insight};
pub use levels::{LEVEL_NAMES, LevelMode, Levels};
pub use slo::{Measured, Pct, SloSpec, Verdict, verdicts};
