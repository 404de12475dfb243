//! `spate k8s-job`: its flags, and the run's arguments checked as a shard's would be, made
//! into the manifest to print. Reads nothing but the clock.

use std::time::{Duration, SystemTime};

use clap::Args;

use super::{Command, Exit, values};
use crate::k8s_job::{JobSpec, check_name, manifest};

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
    #[arg(last = true, required = true, value_name = "SPATE ARGS")]
    pub args: Vec<String>,
}

pub(super) fn command(a: K8sJobArgs) -> Result<Command, Exit> {
    let usage = |m: String| Exit::usage(format!("k8s-job: {m}"));
    check_name(&a.name).map_err(|e| usage(format!("--name {e}")))?;
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
    match super::parse(argv) {
        Ok(Command::Run { .. }) => {}
        Ok(_) => {
            return Err(usage(
                "after -- come a run's flags and URL, not a command".into(),
            ));
        }
        Err(e) => {
            let why = e.message.strip_prefix("spate: ").unwrap_or(&e.message);
            return Err(usage(format!("the run: {why}")));
        }
    }
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
        })
        .into_bytes(),
    ))
}
