//! `spate k8s-job`: its flags, and the run's arguments checked as a shard's would be, made
//! into the manifest to print, with the files those arguments name. A script is compiled, never
//! run: printing a manifest executes nothing. Reads the clock and those files only.

use std::time::{Duration, SystemTime};

use clap::Args;

use clap::Parser as _;

use super::args::{Cli, RunArgs};
use super::{Command, Exit, values};
use crate::k8s_job::{
    FILES_LIMIT, JobSpec, Shipped, check_name, check_namespace, check_quantity, manifest,
};

#[derive(Debug, Args)]
pub struct K8sJobArgs {
    /// Pods, each one shard of the job.
    #[arg(long = "shards", value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub shards: u32,

    /// The container image; its entrypoint must be spate (the repository's Containerfile's is).
    #[arg(long = "image", value_name = "IMAGE")]
    pub image: String,

    /// The Job's name (its pods' logs are found by it).
    #[arg(long = "name", value_name = "NAME", default_value = "spate")]
    pub name: String,

    /// The Job's namespace [default: kubectl's].
    #[arg(long = "namespace", value_name = "NS")]
    pub namespace: Option<String>,

    /// When the shards start, from now: time to apply the manifest, schedule the pods, pull
    /// the image and connect.
    #[arg(long = "start-in", value_name = "T", default_value = "60s", value_parser = values::duration)]
    pub start_in: Duration,

    /// A shard whose connections are ready later than this after the start sends nothing and
    /// fails (exit 4), and so does the Job.
    #[arg(long = "start-deadline", value_name = "T", default_value = "5s", value_parser = values::duration)]
    pub start_deadline: Duration,

    /// At most one pod a node, so that the shards load from separate machines.
    #[arg(long = "spread")]
    pub spread: bool,

    /// Each pod's CPU, requested and limited (a Kubernetes quantity: 2, 500m).
    #[arg(long = "cpu", value_name = "Q")]
    pub cpu: Option<String>,

    /// Each pod's memory, requested and limited (a Kubernetes quantity: 512Mi).
    #[arg(long = "memory", value_name = "Q")]
    pub memory: Option<String>,

    /// The run's flags and URL, after --, as spate takes them (the job's -c, -n or -z, -q).
    /// The files they name (-s, -D, --urls-from-file, --cacert, --cert, --key) travel in a
    /// ConfigMap, mounted in each pod at the same path; a script is compiled here, never run.
    #[arg(last = true, required = true, value_name = "SPATE ARGS")]
    pub args: Vec<String>,
}

pub(super) fn command(a: K8sJobArgs) -> Result<Command, Exit> {
    let usage = |m: String| Exit::usage(format!("k8s-job: {m}"));
    check_name(&a.name).map_err(|e| usage(format!("--name {e}")))?;
    if let Some(ns) = &a.namespace {
        check_namespace(ns).map_err(|e| usage(format!("--namespace {e}")))?;
    }
    for (flag, q) in [("--cpu", &a.cpu), ("--memory", &a.memory)] {
        if let Some(q) = q {
            check_quantity(q).map_err(|e| usage(format!("{flag} {e}")))?;
        }
    }
    for flag in [
        "--shard",
        "--shard-from-env",
        "--start-at",
        "--start-deadline",
        "--log-result",
    ] {
        if a.args
            .iter()
            .any(|w| w == flag || w.starts_with(&format!("{flag}=")))
        {
            return Err(usage(format!(
                "{flag} is the manifest's to set: give the job's flags only"
            )));
        }
    }
    // The run must be one a shard can make: checked as the last, smallest shard.
    let last = format!("{}/{}", a.shards - 1, a.shards);
    let argv = ["spate".to_string()]
        .into_iter()
        .chain(a.args.iter().cloned())
        .chain(["--shard".to_string(), last]);
    let the_run = |e: Exit| {
        let why = e.message.strip_prefix("spate: ").unwrap_or(&e.message);
        usage(format!("the run: {why}"))
    };
    let cli = Cli::try_parse_from(argv)
        .map_err(|e| the_run(Exit::usage(super::one_line(&super::error_text(&e)))))?;
    if cli.command.is_some() {
        return Err(usage(
            "after -- come a run's flags and URL, not a command".into(),
        ));
    }
    let mut run = cli.run;
    refuse_pod_only(&run).map_err(usage)?;
    let metrics_port = metrics_port(&run).map_err(usage)?;
    let files = shipped(&run).map_err(usage)?;
    // Compiled, not run: a manifest is printed, nothing executed.
    run.load.compile_script_only = true;
    super::run(run).map_err(the_run)?;
    Ok(Command::Print(
        manifest(&JobSpec {
            name: a.name,
            namespace: a.namespace,
            image: a.image,
            shards: a.shards,
            start_at: SystemTime::now() + a.start_in,
            start_deadline: a.start_deadline,
            spread: a.spread,
            cpu: a.cpu,
            memory: a.memory,
            args: a.args,
            files,
            metrics_port,
        })
        .into_bytes(),
    ))
}

/// Flags that mean something only on this machine: files written in a pod are gone with it,
/// and a Unix socket or a saved run to compare with are not in it.
fn refuse_pod_only(r: &RunArgs) -> Result<(), String> {
    let f = &r.output.forms;
    for (flag, given) in [
        ("--save", f.save.is_some()),
        ("--html", f.html.is_some()),
        ("--csv-timeline", f.csv_timeline.is_some()),
        ("--csv-stages", f.csv_stages.is_some()),
        ("--hdr-log", r.output.hdr_log.is_some()),
        ("--live-json", r.output.live_json.is_some()),
    ] {
        if given {
            return Err(format!(
                "{flag} would write in a pod, and a pod's files are gone when it ends: the shards' results come from their logs (spate merge shards.log, which takes --html)"
            ));
        }
    }
    if !r.output.baseline.is_empty() {
        return Err(
            "--baseline judges a whole run and a pod runs one shard: merge the shards, then compare the merged result"
                .into(),
        );
    }
    if r.load.unix_socket.is_some() {
        return Err(
            "--unix-socket names a socket inside the pod, where only spate runs: give the service's URL"
                .into(),
        );
    }
    Ok(())
}

/// --metrics-listen's port, for the pods' scrape annotations; a loopback address is refused,
/// since Prometheus reaches a pod only at the pod's own address.
fn metrics_port(r: &RunArgs) -> Result<Option<u16>, String> {
    let Some(given) = &r.output.metrics_listen else {
        return Ok(None);
    };
    let addr = crate::watch::endpoint::address(given)?;
    if addr.ip().is_loopback() {
        return Err(format!(
            "--metrics-listen {given} listens on the pod's loopback, where Prometheus cannot reach it: give --metrics-listen 0.0.0.0:{}",
            addr.port()
        ));
    }
    Ok(Some(addr.port()))
}

/// The files the run's flags name, read here to travel with the Job (each at most what spate
/// reads for its flag, all together at most what a ConfigMap holds).
fn shipped(r: &RunArgs) -> Result<Vec<Shipped>, String> {
    use crate::files::{BODY_LIMIT, PEM_LIMIT, SCRIPT_LIMIT};
    let l = &r.load;
    let named = [
        ("--script", &l.script, SCRIPT_LIMIT),
        ("--body-file", &l.body_file, BODY_LIMIT),
        ("--urls-from-file", &r.urls_from_file, BODY_LIMIT),
        ("--cacert", &l.cacert, PEM_LIMIT),
        ("--cert", &l.cert, PEM_LIMIT),
        ("--key", &l.key, PEM_LIMIT),
    ];
    let mut files: Vec<Shipped> = Vec::new();
    for (flag, path, limit) in named {
        let Some(path) = path else {
            continue;
        };
        let bytes = crate::files::read(flag, path, limit)?;
        let file = Shipped::new(path, bytes).map_err(|e| format!("{flag} {e}"))?;
        match files.iter().find(|f| f.mount == file.mount) {
            Some(same) if same.bytes == file.bytes => {}
            Some(_) => {
                return Err(format!(
                    "{flag} {}: another flag's file is mounted at {} in the pods",
                    path.display(),
                    file.mount
                ));
            }
            None => files.push(file),
        }
    }
    let total: usize = files.iter().map(|f| f.bytes.len()).sum();
    if total > FILES_LIMIT {
        return Err(format!(
            "the files the run names hold {} KiB, more than the {} KiB a ConfigMap can carry: build them into the image, or mount a volume of your own and give its paths",
            total >> 10,
            FILES_LIMIT >> 10
        ));
    }
    Ok(files)
}
