//! The only module that knows clap: turns argv into a validated `Command` (a `Plan` for a load
//! test, a server config, or the demo), or into one line to print and an exit code.

mod args;
mod compare;
mod dry_run;
mod generate;
mod grpc;
mod grpc_messages;
mod k8s;
mod list;
mod load;
mod load_args;
mod mcp;
mod mcp_args;
mod merge;
mod output_args;
mod outputs;
mod report;
mod series_args;
mod serve;
mod shard;
mod sweep;
mod values;
mod wrk;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser as _;
use clap::error::ErrorKind;

use crate::plan::Plan;
use crate::report::Output;
use crate::report::ReportOptions;
use crate::serve::ServeConfig;
use args::{Cli, OutputArgs, RunArgs, Sub};
pub use grpc::{GrpcRun, listing as grpc_listing};
pub use mcp::McpRun;
pub use merge::Merge;
use outputs::{load_inputs, output, outputs_spare_inputs};

use crate::exit::EXIT_USAGE;

/// Requests sent when neither --requests nor --duration is given (as hey and oha do).
pub const DEFAULT_REQUESTS: u64 = 200;

/// Connections unless -c says otherwise (or a smaller -n).
pub const DEFAULT_CONNECTIONS: u32 = 50;

/// What the command line asks for.
#[derive(Debug)]
pub enum Command {
    Run {
        plan: Box<Plan>,
        /// `-s`: the script the plan names, loaded.
        script: Option<crate::script::Loaded>,
        show: Show,
    },
    Serve(ServeConfig),
    /// `http2`: h2c with this many streams per connection.
    Demo {
        duration: Duration,
        connections: u32,
        http2: Option<u32>,
        show: Show,
    },
    /// Text to print to stdout as is: a completion script or the manual page.
    Print(Vec<u8>),
    /// `spate report`: a saved result, read and checked, shown again.
    Report {
        summary: Box<crate::report::Report>,
        output: Output,
    },
    /// `spate compare`: targets (name, plan) run in rounds and compared.
    Compare(Compare),
    /// `spate sweep`: one URL at several concurrency levels.
    Sweep(Sweep),
    /// `spate mcp`: an MCP server's tools, listed or measured.
    Mcp(Box<McpRun>),
    /// `spate grpc` without --proto: the server's schema asked by reflection, then listed or
    /// called.
    Grpc(Box<grpc::GrpcRun>),
    /// `spate merge`: a job's shards' results, merged.
    Merge(Merge),
}

/// What `spate sweep` runs and how it shows the result.
#[derive(Debug)]
pub struct Sweep {
    /// Connections at each level, ascending.
    pub levels: Vec<u32>,
    /// The target's plan at each level.
    pub runs: Vec<Plan>,
    /// The target's script (`-s`), loaded once for every level.
    pub script: Option<crate::script::Loaded>,
    /// `--vs`: the reference's plan at each level.
    pub vs: Option<Vec<Plan>>,
    /// The reference's script.
    pub vs_script: Option<crate::script::Loaded>,
    pub format: crate::report::versus::CompareForm,
    pub save_dir: Option<PathBuf>,
    /// `--html`: the sweep as a page, written here too.
    pub html: Option<PathBuf>,
    pub progress: bool,
}

/// One target of `spate compare`: its name, its plan and the script loaded beside it.
#[derive(Debug)]
pub struct CompareTarget {
    pub name: String,
    pub plan: Plan,
    pub script: Option<crate::script::Loaded>,
}

/// What `spate compare` runs and how it judges and shows the result.
#[derive(Debug)]
pub struct Compare {
    pub targets: Vec<CompareTarget>,
    pub rounds: u16,
    /// `--order random`: the seed of each round's shuffle; `None`: the order given.
    pub shuffle: Option<u64>,
    /// Index into `targets`.
    pub reference: usize,
    pub alpha: f64,
    pub noise: f64,
    pub format: crate::report::versus::CompareForm,
    pub save_dir: Option<PathBuf>,
    /// `--html`: the comparison as a page, written here too.
    pub html: Option<PathBuf>,
    pub progress: bool,
    /// The targets are MCP servers, each given these calls.
    pub mcp: Option<crate::mcp::stage::Calls>,
}

/// How a load test is shown: the report, its analysis and the live display.
#[derive(Debug, Clone, PartialEq)]
pub struct Show {
    pub output: Output,
    pub summary: ReportOptions,
    /// Live progress on stderr (off with --no-progress).
    pub progress: bool,
    /// Lines about the command line to print before the run (a flag that has no effect).
    pub notes: Vec<String>,
    /// `-v`: show one exchange on stderr before the run.
    pub verbose: bool,
    /// `--live-json FILE` (`-`: stdout): the timeline's entries as lines while the run goes.
    pub live_json: Option<PathBuf>,
    /// `--metrics-listen`: where the metrics endpoint listens, and `--metrics-linger`.
    pub metrics: Option<std::net::SocketAddr>,
    pub metrics_linger: std::time::Duration,
    /// `spate grpc`: the method called, which `-v` shows the messages of.
    pub grpc: Option<crate::grpc::schema::Method>,
}

/// The command line ended before anything ran: help, version, or an error.
#[derive(Debug, PartialEq, Eq)]
pub struct Exit {
    pub code: u8,
    /// Printed as is: to stdout for help and version, to stderr otherwise.
    pub message: String,
}

impl Exit {
    fn usage(message: impl Into<String>) -> Exit {
        Exit {
            code: EXIT_USAGE,
            message: format!("spate: {}", message.into()),
        }
    }
}

/// clap's error in one line: its first line, with the indented lines that complete it (such as
/// the missing arguments) appended; the usage block after them is noise here.
fn one_line(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("invalid command line");
    let mut out = first.strip_prefix("error: ").unwrap_or(first).to_string();
    let details: Vec<&str> = lines
        .take_while(|l| l.starts_with(' '))
        .map(str::trim)
        .collect();
    if !details.is_empty() {
        out = format!("{} {}", out.trim_end(), details.join(", "));
    }
    out
}

/// clap's error text, except for the flags that carry secrets: clap repeats an invalid value,
/// so for them only the flag and the reason are shown.
fn error_text(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    if e.kind() == ErrorKind::ValueValidation
        && let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg)
        && SECRET_FLAGS.iter().any(|f| arg.starts_with(f))
    {
        let why = std::error::Error::source(e).map_or_else(String::new, |s| s.to_string());
        return format!("invalid value for '{arg}': {why}");
    }
    let text = e.to_string();
    match e.get(ContextKind::SuggestedArg) {
        Some(ContextValue::String(s)) => {
            let first = text.lines().next().unwrap_or_default();
            format!("{first}; did you mean '{s}'?")
        }
        _ => text,
    }
}

/// Flags whose values may be secrets (a header may be Authorization or Cookie).
const SECRET_FLAGS: [&str; 2] = ["--header", "--basic-auth"];

pub fn parse<I, T>(argv: I) -> Result<Command, Exit>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
    let cli = Cli::try_parse_from(&argv).map_err(|e| match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => Exit {
            code: 0,
            message: e.to_string(),
        },
        _ => Exit::usage(format!("{} (see spate --help)", one_line(&error_text(&e)))),
    })?;
    match cli.command {
        Some(Sub::Serve(s)) => serve::command(s),
        Some(Sub::Demo(d)) => {
            let connections = d.connections.connections.unwrap_or(DEFAULT_CONNECTIONS);
            if connections == 0 {
                return Err(Exit::usage("--connections must be at least 1"));
            }
            if d.duration.is_zero() {
                return Err(Exit::usage("--duration must be longer than zero"));
            }
            if d.streams == 0 {
                return Err(Exit::usage("--streams must be at least 1"));
            }
            Ok(Command::Demo {
                duration: d.duration,
                connections,
                http2: d.http2.then_some(d.streams),
                show: show(d.output)?,
            })
        }
        Some(Sub::Completions { shell }) => Ok(Command::Print(generate::completions(shell))),
        Some(Sub::Man) => Ok(Command::Print(generate::man())),
        Some(Sub::Report(r)) => report::command(r),
        Some(Sub::Compare(c)) => compare::command(*c, &argv),
        Some(Sub::Sweep(s)) => sweep::command(*s),
        Some(Sub::Wrk(w)) => wrk::command(*w),
        Some(Sub::Mcp(m)) => mcp::command(*m),
        Some(Sub::Grpc(g)) => grpc::command(*g),
        Some(Sub::Merge(m)) => merge::command(m),
        Some(Sub::K8sJob(k)) => k8s::command(*k),
        None => run(cli.run),
    }
}

fn show(o: OutputArgs) -> Result<Show, Exit> {
    if o.max_regression.is_some() && o.baseline.is_empty() {
        return Err(Exit::usage(
            "--max-regression needs --baseline FILE: the saved run to compare with",
        ));
    }
    let mut baseline = Vec::new();
    for path in &o.baseline {
        let shown = path.display().to_string();
        let bytes =
            crate::files::read("--baseline", path, report::RESULT_LIMIT).map_err(Exit::usage)?;
        let saved = report::parse_result(&bytes)
            .map_err(|e| Exit::usage(format!("--baseline {shown}: {e}")))?;
        if let Some(e) = &saved.run.error {
            return Err(Exit::usage(format!(
                "--baseline {shown}: that run did not start ({})",
                e.message
            )));
        }
        baseline.push(crate::analysis::Sample::of(shown, &saved.run));
    }
    let to_stdout = o.live_json.as_deref() == Some(std::path::Path::new("-"));
    let mut shown = output(
        o.forms,
        o.hdr_log,
        o.live_json.clone().filter(|_| !to_stdout),
    )?;
    if to_stdout {
        if shown.save.is_none() && shown.html.is_none() {
            return Err(Exit::usage(
                "--live-json -: the lines take stdout, where the report is then not printed; keep the report with --save FILE or --html FILE",
            ));
        }
        shown.print = false;
    }
    let metrics = match &o.metrics_listen {
        Some(a) => Some(crate::watch::endpoint::address(a).map_err(Exit::usage)?),
        None => None,
    };
    let baselines: Vec<(&str, PathBuf)> = o
        .baseline
        .iter()
        .map(|p| ("--baseline", p.clone()))
        .collect();
    let show = Show {
        output: shown,
        live_json: o.live_json,
        metrics,
        metrics_linger: o.metrics_linger,
        summary: ReportOptions {
            slo: o.slo.unwrap_or_default(),
            hist_bins: usize::from(o.hist_bins),
            baseline,
            gates: o.max_regression.unwrap_or_default(),
        },
        progress: !o.no_progress,
        notes: Vec::new(),
        verbose: false,
        grpc: None,
    };
    outputs_spare_inputs(&show, &baselines)?;
    Ok(show)
}

/// `--save-dir DIR` of `spate compare` and `spate sweep`: a directory that is there.
fn check_save_dir(dir: &std::path::Path) -> Result<(), Exit> {
    let why = match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(_) => "not a directory",
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            "no such directory (spate writes into one that is there)"
        }
        Err(_) => "cannot be read",
    };
    Err(Exit::usage(format!("--save-dir {}: {why}", dir.display())))
}

/// `--csv-stages` writes the rows of a --stages run: without one it would write a header alone.
fn csv_stages_need_stages(show: &Show, plan: &Plan) -> Result<(), Exit> {
    match show.output.csv_stages.is_some() && plan.stages.is_none() {
        true => Err(Exit::usage(
            "--csv-stages writes the rows of a --stages run: give --stages (or drop --csv-stages)",
        )),
        false => Ok(()),
    }
}

/// The command `word` may have been meant as (`comapre`: `compare`), when it is no URL.
fn misspelt_command(word: &str) -> Option<String> {
    if word.contains("://") || word.contains(['.', ':', '/']) || word.len() < 3 {
        return None;
    }
    use clap::CommandFactory;
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|name| strsim::levenshtein(word, name) <= 2)
        .min_by_key(|name| strsim::levenshtein(word, name))
}

fn run(r: RunArgs) -> Result<Command, Exit> {
    if let Some(cmd) = r.urls.first().and_then(|w| misspelt_command(w)) {
        return Err(Exit::usage(format!(
            "no command {:?}: did you mean spate {cmd}? (a URL starts with http:// or https://)",
            r.urls[0]
        )));
    }
    let list = list::request_list(&r)?;
    let url = match (&list, r.urls.as_slice()) {
        (Some(l), _) => l.entries[0].target.url.clone(),
        (None, [url]) => url.clone(),
        (None, _) => {
            return Err(Exit::usage(
                "a URL is required, e.g. spate -c 50 -z 10s http://127.0.0.1:8080/ (see spate --help)",
            ));
        }
    };
    let verbose = r.load.verbose;
    let dry_run = r.load.dry_run;
    let mut inputs = load_inputs(&r.load);
    if let Some(f) = &r.urls_from_file {
        inputs.push(("--urls-from-file", f.clone()));
    }
    if !r.script_args.is_empty() && r.load.script.is_none() {
        return Err(Exit::usage(
            "words after -- are a --script's arguments, and there is no --script",
        ));
    }
    let mut load = r.load;
    load.script_args = r.script_args;
    let load::Planned {
        mut plan,
        script,
        mut notes,
    } = load::plan(load, &url)?;
    if let Some(l) = list {
        plan.list = Some(std::sync::Arc::new(l));
    }
    shard::apply(&mut plan, &r.shard)?;
    plan.validate().map_err(|e| Exit::usage(e.to_string()))?;
    if dry_run {
        let text = crate::verbose::dry_run(&plan, script.as_ref()).map_err(Exit::usage)?;
        return Ok(Command::Print(text.into_bytes()));
    }
    notes.extend(shard::notes(&plan));
    let mut show = show(r.output)?;
    outputs_spare_inputs(&show, &inputs)?;
    csv_stages_need_stages(&show, &plan)?;
    show.notes = notes;
    show.verbose = verbose;
    show.output.log_result = r.shard.log_result;
    Ok(Command::Run {
        plan: Box::new(plan),
        script,
        show,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{H2, Protocol, Stop};
    use crate::report::Format;

    fn plan(args: &[&str]) -> Plan {
        let argv = std::iter::once("spate").chain(args.iter().copied());
        match parse(argv) {
            Ok(Command::Run { plan, .. }) => *plan,
            other => panic!("expected a run, got {other:?}"),
        }
    }

    fn error(args: &[&str]) -> String {
        let argv = std::iter::once("spate").chain(args.iter().copied());
        match parse(argv) {
            Err(Exit {
                code: EXIT_USAGE,
                message,
            }) => message,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn each_subcommand_is_described_by_its_own_words() {
        use clap::CommandFactory as _;
        let words = [
            ("serve", "built-in target server"),
            ("demo", "short load test"),
            ("completions", "shell completion"),
            ("man", "manual page"),
            ("report", "saved result"),
            ("compare", "Compare targets"),
            ("wrk", "Run as wrk runs"),
            ("sweep", "several concurrency levels"),
            ("mcp", "MCP server's tools"),
            ("grpc", "Call a gRPC method"),
            ("merge", "a job's shards"),
            ("k8s-job", "Kubernetes Indexed Job"),
        ];
        let cli = args::Cli::command();
        let subs: Vec<_> = cli.get_subcommands().collect();
        assert_eq!(
            subs.len(),
            words.len(),
            "a subcommand without its words here"
        );
        for sub in subs {
            let name = sub.get_name();
            let want = words
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("{name}: no words for it here"))
                .1;
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            let long = sub
                .get_long_about()
                .map(|a| a.to_string())
                .unwrap_or_default();
            assert!(about.contains(want), "spate {name}'s help says {about:?}");
            for (other, theirs) in words.iter().filter(|(n, _)| *n != name) {
                assert!(
                    !long.contains(theirs),
                    "spate {name}'s help has {other}'s words: {long:?}"
                );
            }
        }
    }

    #[test]
    fn defaults() {
        let p = plan(&["http://127.0.0.1:8080/"]);
        assert_eq!(p.connections, 50);
        assert_eq!(p.stop, Stop::Requests(DEFAULT_REQUESTS));
        assert_eq!(p.timeout, Duration::from_secs(20));
        assert_eq!(p.connect_timeout, Duration::from_secs(10));
        assert_eq!(p.setup_timeout, Duration::from_secs(30));
        let long = plan(&["--connect-timeout", "45s", "http://h/"]);
        assert_eq!(long.setup_timeout, Duration::from_secs(45));
        assert!(p.keep_alive && p.compression);
        assert!(p.threads >= 1);
    }

    #[test]
    fn duration_and_requests_do_not_mix() {
        let p = plan(&["-c", "50", "-z", "1m30s", "http://h/"]);
        assert_eq!(p.stop, Stop::Duration(Duration::from_secs(90)));
        let e = parse(["spate", "-n", "10", "-z", "1m30s", "http://h/"]).unwrap_err();
        assert_eq!(e.code, EXIT_USAGE);
        assert!(
            e.message.contains("--requests") && e.message.contains("--duration"),
            "{}",
            e.message
        );
    }

    #[test]
    fn every_flag_reaches_the_plan() {
        let p = plan(&[
            "-n",
            "10k",
            "-c",
            "7",
            "-t",
            "3s",
            "--connect-timeout",
            "500ms",
            "--setup-timeout",
            "2m",
            "-m",
            "PUT",
            "-H",
            "X-A: 1",
            "-d",
            "payload",
            "-T",
            "text/x",
            "-A",
            "a/b",
            "-a",
            "u:p",
            "--disable-keepalive",
            "--disable-compression",
            "--threads",
            "3",
            "http://h:81/p",
        ]);
        assert_eq!(p.stop, Stop::Requests(10_000));
        assert_eq!((p.connections, p.threads), (7, 3));
        assert_eq!(p.timeout, Duration::from_secs(3));
        assert_eq!(p.connect_timeout, Duration::from_millis(500));
        assert_eq!(p.setup_timeout, Duration::from_secs(120));
        assert_eq!(p.method, "PUT");
        assert_eq!(p.body, b"payload");
        assert!(!p.keep_alive && !p.compression);
        assert_eq!(
            p.headers,
            vec![
                ("Accept".to_string(), "a/b".to_string()),
                ("Content-Type".into(), "text/x".into()),
                ("Authorization".into(), "Basic dTpw".into()),
                ("X-A".into(), "1".into()),
            ]
        );
        assert_eq!((p.target.port, p.target.path.as_str()), (81, "/p"));
    }

    #[test]
    fn explicit_header_replaces_flag_header() {
        let p = plan(&["-T", "a/b", "-H", "content-type: c/d", "http://h/"]);
        assert_eq!(
            p.headers,
            vec![("content-type".to_string(), "c/d".to_string())]
        );
    }

    #[test]
    fn body_file_is_read_once() {
        let path = std::env::temp_dir().join(format!("spate-cli-body-{}", std::process::id()));
        std::fs::write(&path, b"from file").unwrap();
        let p = plan(&["-D", path.to_str().unwrap(), "-m", "POST", "http://h/"]);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(p.body, b"from file");
    }

    #[test]
    fn usage_errors_are_one_line() {
        let cases: &[(&[&str], &str)] = &[
            (&[], "a URL is required"),
            (&["not a url"], "invalid URL"),
            (&["ftp://h/"], "unsupported scheme"),
            (
                &["-c", "0", "http://h/"],
                "--connections must be at least 1",
            ),
            (
                &["-n", "10", "-c", "50", "http://h/"],
                "smaller than --connections",
            ),
            (
                &["-D", "/nonexistent/spate/body", "http://h/"],
                "cannot read --body-file",
            ),
            (&["-H", "nocolon", "http://h/"], "not a header"),
            (&["-d", "x", "-D", "f", "http://h/"], "cannot be used with"),
            (&["-n", "lots", "http://h/"], "not a count"),
            (&["-z", "soon", "http://h/"], "not a duration"),
            (&["-t", "0s", "http://h/"], "--timeout must be at least 1ms"),
            (
                &["--threads", "0", "http://h/"],
                "--threads must be at least 1",
            ),
            (&["--format", "xml", "http://h/"], "invalid value"),
            (&["--bogus", "http://h/"], "unexpected argument"),
            (&["-m", "GE T", "http://h/"], "invalid method"),
            (
                &["-H", "Content-Length: 5", "http://h/"],
                "managed by spate",
            ),
            (
                &["--save", "/nonexistent/dir/out.json", "http://h/"],
                "--save",
            ),
            (
                &["--csv-timeline", "/nonexistent/dir/t.csv", "http://h/"],
                "--csv-timeline /nonexistent/dir/t.csv: cannot write there",
            ),
            (
                &["--hdr-log", "/nonexistent/dir/t.hlog", "http://h/"],
                "--hdr-log /nonexistent/dir/t.hlog: cannot write there",
            ),
        ];
        for (args, want) in cases {
            let msg = error(args);
            assert!(msg.contains(want), "{args:?}: {msg:?} lacks {want:?}");
            assert_eq!(msg.lines().count(), 1, "{args:?}: {msg:?}");
            assert!(msg.starts_with("spate: "), "{msg:?}");
        }
    }

    #[test]
    fn tls_and_h2_flags_reach_the_plan() {
        let dir = std::env::temp_dir().join(format!("spate-cli-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for f in ["ca.pem", "c.pem", "k.pem"] {
            std::fs::write(dir.join(f), f.as_bytes()).unwrap();
        }
        let path = |f: &str| dir.join(f).to_string_lossy().into_owned();
        let p = plan(&[
            "--http2",
            "-p",
            "16",
            "--h2-stream-window",
            "1m",
            "--h2-conn-window",
            "2m",
            "--h2-max-frame",
            "32768",
            "-k",
            "--cacert",
            &path("ca.pem"),
            "--cert",
            &path("c.pem"),
            "--key",
            &path("k.pem"),
            "https://h/",
        ]);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(p.protocol, Protocol::Http2);
        assert_eq!(
            p.h2,
            H2 {
                streams: 16,
                stream_window: 1_000_000,
                conn_window: 2_000_000,
                max_frame: 32_768
            }
        );
        assert!(p.tls.insecure);
        assert_eq!(p.tls.cacert.as_deref(), Some(&b"ca.pem"[..]));
        assert_eq!(p.tls.cert.as_deref(), Some(&b"c.pem"[..]));
        assert_eq!(p.tls.key.as_deref(), Some(&b"k.pem"[..]));
        assert_eq!(plan(&["--http1.1", "https://h/"]).protocol, Protocol::Http1);
        assert_eq!(plan(&["https://h/"]).protocol, Protocol::Auto);
        for (flags, protocol, streams) in [
            (&["--http3"][..], Protocol::Http3, "4"),
            (&["--http-version", "3"][..], Protocol::Http3, "4"),
            (&["--http-version", "2"][..], Protocol::Http2, "4"),
            (&["--http-version", "1.1"][..], Protocol::Http1, "1"),
            (&["--alt-svc"][..], Protocol::Http3, "4"),
        ] {
            let p = plan(&[flags, &["-p", streams, "https://h/"]].concat());
            assert_eq!(p.protocol, protocol, "{flags:?}");
            assert_eq!(p.h2.streams.to_string(), streams, "{flags:?}");
            assert_eq!(p.alt_svc, flags == ["--alt-svc"], "{flags:?}");
        }
        assert_eq!(
            plan(&["--http2", "-p", "4", "http://h/"]).h2.streams,
            4,
            "h2c"
        );
    }

    #[test]
    fn bad_tls_and_h2_combinations() {
        for (args, want) in [
            (
                &["--http1.1", "--http2", "https://h/"][..],
                "cannot be used with",
            ),
            (&["-p", "4", "http://h/"][..], "needs HTTP/2"),
            (&["-p", "4", "--http1.1", "https://h/"][..], "needs HTTP/2"),
            (
                &["-p", "0", "--http2", "http://h/"][..],
                "--streams must be at least 1",
            ),
            (
                &["-p", "2", "--disable-keepalive", "https://h/"][..],
                "leaves streams idle",
            ),
            (
                &["-p", "4", "--rpc", "2", "https://h/"][..],
                "leaves streams idle",
            ),
            (
                &["--rpc", "3", "--disable-keepalive", "http://h/"][..],
                "give one or the other",
            ),
            (&["--rpc", "0", "http://h/"][..], "--rpc must be at least 1"),
            (
                &["--max-lag", "10ms", "http://h/"][..],
                "needs the open model",
            ),
            (&["-q", "0", "http://h/"][..], "above zero"),
            (&["-q", "fast", "http://h/"][..], "not a rate"),
            (&["--warmup", "soon", "http://h/"][..], "not a duration"),
            (
                &["--cacert", "/nonexistent/ca.pem", "https://h/"][..],
                "cannot read --cacert",
            ),
            (
                &["--h2-max-frame", "100", "--http2", "http://h/"][..],
                "--h2-max-frame",
            ),
            (
                &["--h2-stream-window", "10", "https://h/"][..],
                "--h2-stream-window",
            ),
        ] {
            let msg = error(args);
            assert!(msg.contains(want), "{args:?}: {msg}");
            assert_eq!(msg.lines().count(), 1);
        }
        let serve_errors: [&[&str]; 3] = [
            &[
                "spate",
                "serve",
                "--h2c",
                "--tls-cert",
                "a",
                "--tls-key",
                "b",
            ],
            &["spate", "serve", "--tls-cert", "a"],
            &["spate", "serve", "--client-ca", "a"],
        ];
        for argv in serve_errors {
            let e = parse(argv.iter().copied()).unwrap_err();
            assert_eq!(e.code, EXIT_USAGE, "{argv:?}");
            assert_eq!(e.message.lines().count(), 1, "{argv:?}: {}", e.message);
        }
    }

    #[test]
    fn report_and_display_flags() {
        let argv = [
            "spate",
            "--slo",
            "p99=250ms,errors=1%",
            "--hist-bins",
            "20",
            "--no-color",
            "--no-progress",
            "http://h/",
        ];
        match parse(argv) {
            Ok(Command::Run { show, .. }) => {
                assert_eq!(show.summary.hist_bins, 20);
                assert_eq!(show.summary.slo.errors, Some(0.01));
                assert_eq!(show.summary.slo.latency.len(), 1);
                assert!(show.output.no_color);
                assert!(!show.progress);
            }
            other => panic!("{other:?}"),
        }
        match parse(["spate", "http://h/"]) {
            Ok(Command::Run { show, .. }) => {
                assert_eq!(show.summary, ReportOptions::default());
                assert!(show.progress && !show.output.no_color);
            }
            other => panic!("{other:?}"),
        }
        for (args, want) in [
            (&["--slo", "p99=soon", "http://h/"][..], "p99:"),
            (&["--slo", "latency=1ms", "http://h/"][..], "unknown target"),
            (&["--hist-bins", "0", "http://h/"][..], "--hist-bins"),
        ] {
            let msg = error(args);
            assert!(msg.contains(want), "{args:?}: {msg}");
            assert_eq!(msg.lines().count(), 1);
        }
    }

    #[test]
    fn what_users_of_other_tools_type() {
        // wrk: -t threads, -d duration, --latency.
        let e = error(&["-t4", "-c200", "-d10s", "http://h/"]);
        assert!(e.contains("--threads 4") && e.contains("-t 4s"), "{e}");
        let e = error(&["-c200", "-d10s", "http://h/"]);
        assert!(e.contains("-z 10s"), "{e}");
        assert_eq!(plan(&["-m", "POST", "-d", "10s", "http://h/"]).body, b"10s");
        assert_eq!(plan(&["-d", "plain text", "http://h/"]).body, b"plain text");
        assert_eq!(
            plan(&["--latency", "-z", "2s", "http://h/"]).stop,
            Stop::Duration(Duration::from_secs(2))
        );
        // -m head is HEAD; an unknown method stays as given.
        assert_eq!(plan(&["-m", "head", "http://h/"]).method, "HEAD");
        assert_eq!(plan(&["-m", "Patch", "http://h/"]).method, "PATCH");
        assert_eq!(plan(&["-m", "purge", "http://h/"]).method, "purge");
        // hey: -n alone; the connections follow a small count.
        assert_eq!(plan(&["-n", "10", "http://h/"]).connections, 10);
        assert_eq!(plan(&["-n", "1k", "http://h/"]).connections, 50);
        assert_eq!(plan(&["-z", "1s", "http://h/"]).connections, 50);
        assert!(error(&["-n", "10", "-c", "20", "http://h/"]).contains("smaller than"));
        // Two URLs are a request list, which must stay on one origin.
        let e = error(&["http://a/", "http://b/"]);
        assert!(e.contains("is not on the origin"), "{e}");
        assert!(plan(&["http://a/x", "http://a/y"]).list.is_some());
        // curl: -k on http:// is harmless and said so.
        match parse(["spate", "-k", "http://u:p@h/"]) {
            Err(e) => assert!(e.message.contains("credentials"), "{e:?}"),
            Ok(other) => panic!("{other:?}"),
        }
        match parse(["spate", "-k", "http://h/"]) {
            Ok(Command::Run { plan, show, .. }) => {
                assert!(!plan.tls.insecure);
                assert_eq!(
                    show.notes,
                    ["spate: note: --insecure has no effect on http://h/ (no TLS)"]
                );
            }
            other => panic!("{other:?}"),
        }
        match parse(["spate", "serve", "--host", "localhost", "--port", "0"]) {
            Ok(Command::Serve(c)) => assert!(c.addr.ip().is_loopback(), "{:?}", c.addr),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn help_and_version_exit_zero() {
        let help = parse(["spate", "--help"]).unwrap_err();
        assert_eq!(help.code, 0);
        assert!(help.message.contains("Exit codes"));
        let version = parse(["spate", "--version"]).unwrap_err();
        assert_eq!(version.code, 0);
        assert!(version.message.contains(env!("CARGO_PKG_VERSION")));
    }

    #[test]
    fn subcommands() {
        match parse([
            "spate",
            "serve",
            "--port",
            "0",
            "--body-size",
            "1k",
            "--status",
            "201",
            "--delay",
            "5ms",
            "--chunked",
            "--threads",
            "2",
        ]) {
            Ok(Command::Serve(c)) => {
                assert_eq!(c.addr.port(), 0);
                assert_eq!(
                    (c.body_size, c.status, c.chunked, c.threads),
                    (1000, 201, true, 2)
                );
                assert_eq!(c.delay, Duration::from_millis(5));
            }
            other => panic!("{other:?}"),
        }
        match parse(["spate", "demo", "-z", "2s", "-c", "8", "--format", "json"]) {
            Ok(Command::Demo {
                duration,
                connections,
                show,
                ..
            }) => {
                assert_eq!(
                    (duration, connections, show.output.format),
                    (Duration::from_secs(2), 8, Format::Json)
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse(["spate", "serve", "--status", "99"])
                .unwrap_err()
                .code,
            EXIT_USAGE
        );
    }

    #[test]
    fn serve_stalls() {
        match parse([
            "spate",
            "serve",
            "--stall-every",
            "12s",
            "--stall-for",
            "1s",
            "--delay",
            "250us",
        ]) {
            Ok(Command::Serve(c)) => {
                let stall = c.stall.expect("--stall-every/--stall-for");
                assert_eq!(
                    (stall.every, stall.length, c.delay),
                    (
                        Duration::from_secs(12),
                        Duration::from_secs(1),
                        Duration::from_micros(250)
                    )
                );
            }
            other => panic!("{other:?}"),
        }
        let bad = |args: &[&str]| {
            let argv = ["spate", "serve"].into_iter().chain(args.iter().copied());
            let e = parse(argv).unwrap_err();
            assert_eq!(e.code, EXIT_USAGE);
            assert_eq!(e.message.lines().count(), 1, "{}", e.message);
            e.message
        };
        // clap's continuation lines name what is missing.
        assert!(bad(&["--stall-every", "1s"]).contains("not provided: --stall-for <TIME>"),);
        assert!(bad(&["--stall-for", "1s"]).contains("--stall-every <TIME>"));
        assert!(bad(&["--stall-every", "1s", "--stall-for", "1s"]).contains("must be shorter"));
    }
}
