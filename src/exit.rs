//! The process's exit codes, the one place they are defined: what each means, for the scripts
//! and CI jobs that read them (USAGE.md's *Exit codes* says the same). Constants only.

/// The run completed and at least one response had a status below 400.
pub const EXIT_OK: u8 = 0;
/// The target was unreachable, or no response below 400 arrived.
pub const EXIT_NO_SUCCESS: u8 = 1;
/// A usage or input error: the command line, a file it names, a script's error.
pub const EXIT_USAGE: u8 = 2;
/// At least one `--slo` threshold failed.
pub const EXIT_THRESHOLDS: u8 = 3;
/// `--start-deadline`: the connections were ready too late after `--start-at`; nothing was sent.
pub const EXIT_LATE: u8 = 4;
/// Stopped by an interrupt (Ctrl-C, SIGTERM, SIGHUP): 128 + SIGINT, as shells expect.
pub const EXIT_INTERRUPTED: u8 = 130;
