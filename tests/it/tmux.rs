//! spate in a real terminal: a tmux pane of known size. Checks with capture-pane that the live
//! block renders and fits the pane, that the cursor is hidden during the run and shown after,
//! that no alternate screen is used, that the block is gone before the report, and that colour
//! appears on a terminal except with NO_COLOR. Needs tmux: .ci/run installs it and sets
//! SPATE_REQUIRE_TMUX=1; elsewhere the test says it was skipped.
#![cfg(unix)]

use std::process::Command;
use std::time::{Duration, Instant};

use spate::serve::{ServeConfig, Server};

struct Session(String);

impl Session {
    fn start(width: u16, command: &str) -> Session {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let name = format!("spate-it-{}-{n}", std::process::id());
        let status = Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                &width.to_string(),
                "-y",
                "40",
            ])
            .arg(command)
            .status()
            .unwrap();
        assert!(status.success());
        Session(name)
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The pane's text and its history, wrapped lines joined (so a line wider than the pane
    /// shows as such). The erased live block never reaches the history: it is overwritten in
    /// place.
    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-J", "-S", "-", "-t", &self.0])
    }

    fn screen_with_escapes(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-e", "-S", "-", "-t", &self.0])
    }

    fn flag(&self, name: &str) -> String {
        self.tmux(&["display", "-p", "-t", &self.0, &format!("#{{{name}}}")])
            .trim()
            .to_string()
    }

    fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let t = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "timed out waiting for {what}:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.0])
            .status();
    }
}

fn have_tmux() -> bool {
    crate::support::required("tmux", "-V", "SPATE_REQUIRE_TMUX")
}

fn server() -> Server {
    let config = ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        delay: Duration::from_millis(1),
        ..ServeConfig::default()
    };
    Server::start(&config).unwrap()
}

/// Runs spate in a pane of `width` columns; returns (the screen while the live block shows,
/// the final screen, the final screen with escapes, cursor flag during the run).
fn run_in_pane(width: u16, env: &str) -> (String, String, String, String) {
    let server = server();
    let command = format!(
        "env {env} TERM=xterm-256color {} -c 4 -z 3s {}; echo SPATE_EXIT=$?; sleep 60",
        env!("CARGO_BIN_EXE_spate"),
        server.url()
    );
    let s = Session::start(width, &command);
    let live = s.wait_until("the live block", |screen| screen.contains("req/s now"));
    let cursor_during = s.flag("cursor_flag");
    let end = s.wait_until("the end of the run", |screen| {
        screen.contains("SPATE_EXIT=")
    });
    assert!(end.contains("SPATE_EXIT=0"), "{end}");
    assert_eq!(s.flag("cursor_flag"), "1", "the cursor is shown again");
    assert_eq!(s.flag("alternate_on"), "0", "no alternate screen");
    let escapes = s.screen_with_escapes();
    (live, end, escapes, cursor_during)
}

#[test]
fn live_block_renders_fits_and_restores_the_terminal() {
    if !have_tmux() {
        return;
    }
    let (live, end, escapes, cursor_during) = run_in_pane(100, "");
    assert_eq!(cursor_during, "0", "the cursor is hidden during the run");
    let block: Vec<&str> = live
        .lines()
        .filter(|l| l.contains("req/s now") || l.starts_with('['))
        .collect();
    assert!(block.len() >= 2, "progress bar and figures:\n{live}");
    assert!(
        live.lines().all(|l| l.len() <= 100),
        "no line wider than the pane:\n{live}"
    );
    assert!(live.contains("errors: none"), "{live}");
    // The block is erased before the report.
    assert!(!end.contains("req/s now"), "{end}");
    assert!(end.contains("Summary") && end.contains("Insight"), "{end}");
    assert!(
        escapes.contains("\x1b[38;5;"),
        "256 colours on a 256-colour terminal"
    );
}

#[test]
fn narrow_pane_truncates_cleanly() {
    if !have_tmux() {
        return;
    }
    let (live, _, _, _) = run_in_pane(40, "");
    let block: Vec<&str> = live
        .lines()
        .filter(|l| l.starts_with('[') || l.contains(" done "))
        .collect();
    assert!(!block.is_empty(), "{live}");
    for line in block {
        assert!(
            line.len() <= 40,
            "{line:?} is wider than the 40-column pane"
        );
    }
}

#[test]
fn no_color_is_honoured_on_a_terminal() {
    if !have_tmux() {
        return;
    }
    let (_, end, escapes, _) = run_in_pane(100, "NO_COLOR=1");
    assert!(end.contains("Summary"));
    assert!(
        !escapes.contains("\x1b[38;5;") && !escapes.contains("\x1b[32m"),
        "no colour with NO_COLOR"
    );
}

#[test]
fn no_progress_draws_nothing_on_a_terminal() {
    if !have_tmux() {
        return;
    }
    let server = server();
    let command = format!(
        "env TERM=xterm-256color {} --no-progress -c 2 -z 1500ms {}; echo SPATE_EXIT=$?; sleep 60",
        env!("CARGO_BIN_EXE_spate"),
        server.url()
    );
    let s = Session::start(90, &command);
    let t = Instant::now();
    loop {
        let screen = s.screen();
        assert!(
            !screen.contains("req/s now"),
            "a live block was drawn:\n{screen}"
        );
        assert_eq!(s.flag("cursor_flag"), "1", "the cursor is never hidden");
        if screen.contains("SPATE_EXIT=0") {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "{screen}");
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// A staged run with a warm-up, in a real terminal: the block first says the warm-up is not
/// recorded, then the stage and its target as the profile moves, and the report follows.
#[test]
fn a_staged_run_shows_its_warm_up_then_its_stage_and_target() {
    if !have_tmux() {
        return;
    }
    let server = server();
    let command = format!(
        "env TERM=xterm-256color {} --warmup 2s --stages 0s:5,2s:5,2s:9 {}; echo SPATE_EXIT=$?; sleep 60",
        env!("CARGO_BIN_EXE_spate"),
        server.url()
    );
    let s = Session::start(120, &command);
    let warm = s.wait_until("the warm-up", |screen| screen.contains("warm-up "));
    assert!(warm.contains("not recorded"), "{warm}");
    let first = s.wait_until("the first stage", |screen| {
        screen.contains("stage 2/3, target 5 connections")
    });
    assert!(
        !first.contains("warm-up "),
        "the warm-up line is gone: {first}"
    );
    s.wait_until("the ramp", |screen| {
        (6..=9).any(|n| screen.contains(&format!("stage 3/3, target {n} connections")))
    });
    let end = s.wait_until("the end of the run", |screen| {
        screen.contains("SPATE_EXIT=")
    });
    assert!(end.contains("SPATE_EXIT=0"), "{end}");
    assert!(
        end.contains("closed model following --stages 0s:5,2s:5,2s:9"),
        "{end}"
    );
    assert!(
        !end.contains("target 5 connections"),
        "the block was erased: {end}"
    );
}
