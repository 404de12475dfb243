//! The command-line application: argv to a `Command`, then signals, live display, engine and
//! report wired together, and the process exit code. It prints only one-line errors and the
//! demo banner; `main.rs` only exits with the code returned here.

use std::io::IsTerminal;
use std::sync::Arc;

use crate::cli::{self, Command, Show};
use crate::engine::{self, Control, RunError};
use crate::exit::{
    EXIT_INTERRUPTED, EXIT_LATE, EXIT_NO_SUCCESS, EXIT_OK, EXIT_THRESHOLDS, EXIT_USAGE,
};
use crate::plan::{Plan, Stop};
use crate::report::{self, Report};
use crate::serve::Server;
use crate::stats::RunFailure;
use crate::ui::{self, Info, Mode, Progress, say};

mod asked;
mod merged;

/// Runs the command line `argv` and returns the exit code.
pub fn main(argv: impl IntoIterator<Item = std::ffi::OsString>) -> u8 {
    // Before anything opens a socket: the load and `spate serve` alike need one per connection.
    engine::raise_nofile();
    let command = match cli::parse(argv) {
        Ok(c) => c,
        Err(exit) => {
            if exit.code == 0 {
                print!("{}", exit.message);
            } else {
                eprintln!("{}", exit.message);
            }
            return exit.code;
        }
    };
    match command {
        Command::Run { plan, script, show } => load_test(&plan, script.as_ref(), &show),
        Command::Print(text) => print_bytes(&text),
        Command::Report { summary, output } => show_again(&summary, &output),
        Command::Compare(c) => crate::compare::run(&c),
        Command::Sweep(s) => crate::sweep::run(&s),
        Command::Mcp(m) => asked::mcp_test(&m),
        Command::Grpc(g) => asked::grpc_test(&g),
        Command::Merge(m) => merged::merge(&m),
        Command::Serve(config) => match Server::start(&config) {
            Ok(server) => serve_until_interrupted(&server),
            Err(e) => {
                eprintln!("spate serve: cannot listen on {}: {e}", config.addr);
                EXIT_USAGE
            }
        },
        Command::Demo {
            duration,
            connections,
            http2,
            show,
        } => match demo_fits(connections) {
            Err(e) => {
                eprintln!("spate demo: {e}");
                EXIT_USAGE
            }
            Ok(()) => demo(duration, connections, http2, &show),
        },
    }
}

/// `spate report`: the saved result shown as the run showed it. A run that did not start has no
/// report: its line on stderr again, and exit 1, as the run itself ended.
fn show_again(summary: &Report, output: &crate::report::Output) -> u8 {
    if let Some(e) = &summary.error {
        say(&format!("spate: {}", e.message));
    }
    let failed = crate::report::emit(summary, output);
    for f in &failed {
        say(&format!("spate: {f}"));
    }
    match (failed.is_empty(), summary.error.is_some()) {
        (false, _) => EXIT_USAGE,
        (true, true) => EXIT_NO_SUCCESS,
        (true, false) => EXIT_OK,
    }
}

/// Writes generated text to stdout; a reader that stops early (`| head`) is not an error.
pub(super) fn print_bytes(text: &[u8]) -> u8 {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text).and_then(|()| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            eprintln!("spate: cannot write to stdout: {e}");
            EXIT_NO_SUCCESS
        }
    }
}

/// `spate demo` once its target fits: start the target in-process, then the load test.
fn demo(duration: std::time::Duration, connections: u32, http2: Option<u32>, show: &Show) -> u8 {
    match crate::demo::start(duration, connections, http2) {
        Ok((server, plan)) => {
            let h2 = http2
                .map(|p| format!(" --http2 -p {p}"))
                .unwrap_or_default();
            eprintln!(
                "spate demo: built-in target on {}; running spate -c {}{h2} -z {}s --threads {} {}",
                server.url(),
                plan.connections,
                duration.as_secs_f64(),
                plan.threads,
                server.url()
            );
            load_test(&plan, None, show)
        }
        Err(e) => {
            eprintln!("spate demo: cannot start the built-in target: {e}");
            EXIT_NO_SUCCESS
        }
    }
}

/// The demo's target shares the process: each connection costs a descriptor on both sides.
fn demo_fits(connections: u32) -> Result<(), String> {
    let (_, load_threads) = crate::demo::split_cores();
    engine::check_nofile(connections.saturating_mul(2), load_threads, connections)
        .map_err(|e| format!("the target and the load share this process: {e}"))
}

/// Serves until SIGINT or SIGTERM, then prints how many requests were answered: the
/// server-side count that accuracy checks compare with the generator's.
fn serve_until_interrupted(server: &Server) -> u8 {
    let flag = crate::ui::interrupt_flag();
    match server.http3() {
        true => println!(
            "spate serve: listening on {} (HTTP/3 too, on UDP port {})",
            server.url(),
            server.addr().port()
        ),
        false => println!("spate serve: listening on {}", server.url()),
    }
    match flag {
        Ok(got) => {
            // Polling keeps this free of a signal-iterator thread; 50 ms is far below what a
            // person or a script waiting for the count notices.
            while !got.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            println!("spate serve: answered {} requests", server.requests());
        }
        Err(e) => {
            eprintln!("spate serve: cannot catch Ctrl-C ({e}); serving until killed");
            loop {
                std::thread::park();
            }
        }
    }
    EXIT_OK
}

fn display_mode(show: &Show) -> Mode {
    if !show.progress {
        Mode::Off
    } else if std::io::stderr().is_terminal() {
        Mode::Terminal
    } else {
        Mode::Plain
    }
}

/// Runs `plan` (with `script`, the one it names, loaded) and shows it as `show` says; returns
/// the exit code.
pub fn load_test(plan: &Plan, script: Option<&crate::script::Loaded>, show: &Show) -> u8 {
    for note in &show.notes {
        say(note);
    }
    // A failed look is shown and the run goes on: its own report says what the load met.
    if show.verbose {
        let shown = match &show.grpc {
            Some(method) => crate::verbose::grpc::exchange(plan, method),
            None => crate::verbose::exchange(plan, script),
        };
        match shown {
            Ok(text) | Err(text) => text.lines().for_each(say),
        }
    }
    let mode = display_mode(show);
    let threads = plan.effective_threads() as usize;
    let control = match mode {
        Mode::Off => Control::new(),
        _ => Control::with_live(threads),
    };
    let board = (show.live_json.is_some() || show.metrics.is_some())
        .then(|| Arc::new(crate::stats::Board::new(threads)));
    let control = Arc::new(match &board {
        Some(b) => control.with_board(b.clone()),
        None => control,
    });
    let mut watching = match board.map(|b| watch(b, plan, show)) {
        Some(Ok(w)) => Some(w),
        Some(Err(e)) => {
            say(&format!("spate: {e}"));
            return EXIT_USAGE;
        }
        None => None,
    };
    if let Err(e) = ui::install_signal_handlers(control.stop_flag()) {
        eprintln!(
            "spate: cannot install the Ctrl-C handler ({e}); Ctrl-C will end spate without a report"
        );
    }
    let info = Info {
        total_requests: match plan.stop {
            Stop::Requests(n) => Some(n),
            Stop::Duration(_) => None,
        },
        duration: match plan.stop {
            Stop::Duration(d) => Some(d),
            Stop::Requests(_) => None,
        },
        connections: plan.connections,
        setup_timeout: plan.setup_timeout,
        stages: plan.stages.clone(),
        warmup: plan.warmup,
    };
    if let Some(s) = script {
        // Script output must not mix into a result that programs read from stdout.
        s.echo.set(match show.output.format {
            _ if !show.output.print => crate::script::Sink::Stderr,
            report::Format::Text | report::Format::Wrk { .. } => crate::script::Sink::Stdout,
            _ => crate::script::Sink::Stderr,
        });
    }
    let mut stage = match script.filter(|s| s.defines.setup || s.defines.done) {
        None => None,
        Some(s) => match crate::script::Stage::new(s.0.clone()) {
            Ok(stage) => Some(stage),
            Err(e) => {
                say(&format!("spate: {e}"));
                return EXIT_USAGE;
            }
        },
    };
    let progress = Progress::start(control.clone(), info, mode);
    // The live display redraws the terminal: the script's lines wait until it is gone.
    if let (Some(s), Mode::Terminal) = (script, mode) {
        s.echo.hold();
    }
    let result = engine::prepare_staged(plan, script, &control, stage.as_mut()).and_then(|armed| {
        // wrk says what it runs once its threads are set up, before the clock.
        if let report::Format::Wrk { .. } = show.output.format {
            let _ = print_bytes(report::wrk::header(plan).as_bytes());
        }
        armed.go()
    });
    if let Some(p) = progress {
        p.finish();
    }
    // The last lines before the report: what reads them sees the run end first.
    if let Some(e) = watching.as_mut().and_then(crate::watch::Watching::run_over) {
        say(&format!("spate: {e}"));
    }
    if let Some(s) = script {
        s.echo.release();
    }
    let out = match result {
        Ok(out) => out,
        Err(e) => {
            say(&format!("spate: {e}"));
            let code = match e {
                // Ctrl-C interrupted a script's init() before the clock.
                RunError::Script(_) if control.stop_requested() => EXIT_INTERRUPTED,
                RunError::Plan(_)
                | RunError::Resolve(crate::route::RouteError::Family { .. })
                | RunError::Tls(_)
                | RunError::Request(_)
                | RunError::Script(_)
                | RunError::FileLimit(_) => EXIT_USAGE,
                RunError::Late { .. } => EXIT_LATE,
                _ if control.stop_requested() => EXIT_INTERRUPTED,
                RunError::Resolve(_) | RunError::Unreachable { .. } | RunError::Threads(_) => {
                    EXIT_NO_SUCCESS
                }
            };
            // Programs reading the JSON (stdout or --save) still get a document that says why.
            let failure = RunFailure {
                kind: e.kind().into(),
                message: e.to_string(),
            };
            let code = emit(&Report::not_run(plan, failure, &show.summary), show, code);
            if let Some(w) = watching {
                w.finish(None, show.metrics_linger);
            }
            return code;
        }
    };
    let summary = Report::new(plan, &out, &show.summary);
    let mut code = emit(&summary, show, exit_code(&summary));
    // After the report: the endpoint then holds the report's figures until a scrape saw them.
    if let Some(w) = watching {
        w.finish(Some(&out.stats), show.metrics_linger);
    }
    if let report::Format::Wrk { latency } = show.output.format {
        let _ = print_bytes(report::wrk::render(&out, latency).as_bytes());
        // As wrk: a run that ran exits 0 whatever its responses were.
        if code == EXIT_NO_SUCCESS {
            code = EXIT_OK;
        }
    }
    // The run stopped at the script's error: its report is above, the error the last line.
    if let Some(e) = &out.script_error {
        say(&format!("spate: {e}"));
        return code;
    }
    if out.script_interrupted {
        say(
            "spate: --script: the script's Lua still ran when the run was over, and was interrupted there",
        );
    }
    // After the report, as wrk calls it.
    if let Some(stage) = &stage
        && let Err(e) = stage.done(&out, &control.take_script_ends())
    {
        say(&format!("spate: {e}"));
        return EXIT_USAGE;
    }
    code
}

/// What watches the run through `board`, as `show` asks; where its metrics are served is said.
fn watch(
    board: Arc<crate::stats::Board>,
    plan: &Plan,
    show: &Show,
) -> Result<crate::watch::Watching, String> {
    let w = crate::watch::setup::start(board, plan, show.live_json.as_deref(), show.metrics)?;
    if let Some(addr) = w.metrics_addr() {
        say(&format!("spate: metrics at http://{addr}/metrics"));
    }
    Ok(w)
}

/// Saves and prints the result as `show` asks; `code`, unless an output could not be written.
pub(super) fn emit(summary: &Report, show: &Show, code: u8) -> u8 {
    let failed = report::emit(summary, &show.output);
    for e in &failed {
        say(&format!("spate: {e}"));
    }
    match failed.is_empty() {
        true => code,
        false => EXIT_USAGE,
    }
}

/// Interrupted beats a script's error beats no success beats failed thresholds.
pub fn exit_code(summary: &Report) -> u8 {
    if summary.generator.stopped_by_signal {
        EXIT_INTERRUPTED
    } else if summary.generator.script_error.is_some() {
        EXIT_USAGE
    } else if !summary.any_success() {
        EXIT_NO_SUCCESS
    } else if !summary.thresholds_pass() {
        EXIT_THRESHOLDS
    } else {
        EXIT_OK
    }
}
