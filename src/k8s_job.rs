//! `spate k8s-job`: a Kubernetes Indexed Job whose pods are the shards of one job. Each pod
//! runs spate with `--shard-from-env` (its completion index) at one `--start-at` instant, and
//! prints its result between marker lines (`--log-result`) for `spate merge` to find in the
//! pods' logs. The manifest is YAML written here: every value that comes from the user is a
//! JSON string, which YAML reads as the same string. Pure: runs and reads nothing.

use std::time::{Duration, SystemTime};

/// What the manifest is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    pub name: String,
    pub namespace: Option<String>,
    pub image: String,
    pub shards: u32,
    /// The instant every shard starts at.
    pub start_at: SystemTime,
    pub start_deadline: Duration,
    /// One pod a node at most, so that the shards load from separate machines.
    pub spread: bool,
    /// Each pod's CPU and memory, requested and limited alike (Kubernetes quantities).
    pub cpu: Option<String>,
    pub memory: Option<String>,
    /// The run's flags and URL, as `spate` takes them.
    pub args: Vec<String>,
}

fn q(s: &str) -> String {
    serde_json::to_string(s).expect("a string serializes")
}

/// The label Kubernetes gives each pod of a Job (1.27 and later).
const JOB_LABEL: &str = "batch.kubernetes.io/job-name";

/// The manifest, with comments that say how to apply it, collect the results and merge them.
pub fn manifest(j: &JobSpec) -> String {
    let at = humantime::format_rfc3339_millis(j.start_at).to_string();
    let deadline = format!("{}ms", j.start_deadline.as_millis());
    let mut args: Vec<String> = [
        "--shard-from-env",
        "--start-at",
        &at,
        "--start-deadline",
        &deadline,
        "--no-progress",
        "--log-result",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(j.args.iter().cloned());
    let n = j.shards;
    let mut o = String::new();
    let mut line = |s: String| {
        o.push_str(&s);
        o.push('\n');
    };
    line(format!("# spate k8s-job: {n} shards, starting at {at}."));
    line("# Apply it before then (the pods connect, then wait for the instant):".into());
    line("#   kubectl apply -f job.yaml".into());
    line("# When the job is complete, collect the shards' results and merge them:".into());
    line(format!(
        "#   kubectl logs -l {JOB_LABEL}={} --prefix --tail=-1 --max-log-requests={n} > shards.log",
        j.name
    ));
    line("#   spate merge shards.log".into());
    line("apiVersion: batch/v1".into());
    line("kind: Job".into());
    line("metadata:".into());
    line(format!("  name: {}", q(&j.name)));
    if let Some(ns) = &j.namespace {
        line(format!("  namespace: {}", q(ns)));
    }
    line("  labels:".into());
    line("    app.kubernetes.io/name: spate".into());
    line("spec:".into());
    line("  completionMode: Indexed".into());
    line(format!("  completions: {n}"));
    line(format!("  parallelism: {n}"));
    // A shard run twice would send its part twice; a failed one fails the job instead.
    line("  backoffLimit: 0".into());
    line("  template:".into());
    line("    metadata:".into());
    line("      labels:".into());
    line("        app.kubernetes.io/name: spate".into());
    line("    spec:".into());
    line("      restartPolicy: Never".into());
    if j.spread {
        line("      topologySpreadConstraints:".into());
        line("        - maxSkew: 1".into());
        line("          topologyKey: kubernetes.io/hostname".into());
        line("          whenUnsatisfiable: DoNotSchedule".into());
        line("          labelSelector:".into());
        line("            matchLabels:".into());
        line(format!("              {JOB_LABEL}: {}", q(&j.name)));
    }
    line("      containers:".into());
    line("        - name: spate".into());
    line(format!("          image: {}", q(&j.image)));
    line("          args:".into());
    for a in &args {
        line(format!("            - {}", q(a)));
    }
    line("          env:".into());
    line("            - name: SPATE_SHARDS".into());
    line(format!("              value: {}", q(&n.to_string())));
    if j.cpu.is_some() || j.memory.is_some() {
        line("          resources:".into());
        for side in ["requests", "limits"] {
            line(format!("            {side}:"));
            if let Some(c) = &j.cpu {
                line(format!("              cpu: {}", q(c)));
            }
            if let Some(m) = &j.memory {
                line(format!("              memory: {}", q(m)));
            }
        }
    }
    o
}

/// A Job's name: a DNS label of at most 63 characters (Kubernetes also puts it in its pods'
/// names and labels).
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    match ok {
        true => Ok(()),
        false => Err(format!(
            "{name:?} is not a Job name: lowercase letters, digits and '-', at most 63, not starting or ending with '-'"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> JobSpec {
        JobSpec {
            name: "spate".into(),
            namespace: None,
            image: "ghcr.io/example/spate:1".into(),
            shards: 4,
            start_at: SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000),
            start_deadline: Duration::from_secs(5),
            spread: false,
            cpu: None,
            memory: None,
            args: vec![
                "-c".into(),
                "400".into(),
                "-H".into(),
                "X-Note: a \"b\": c".into(),
            ],
        }
    }

    #[test]
    fn the_manifest_is_an_indexed_job_whose_pods_run_the_shards() {
        let m = manifest(&spec());
        for want in [
            "completionMode: Indexed\n",
            "completions: 4\n",
            "parallelism: 4\n",
            "backoffLimit: 0\n",
            "restartPolicy: Never\n",
            "- \"--shard-from-env\"\n",
            "- \"2027-01-15T08:00:00.000Z\"\n",
            "- \"5000ms\"\n",
            "- \"--log-result\"\n",
            // A user's value with YAML's special characters is one JSON string.
            "- \"X-Note: a \\\"b\\\": c\"\n",
            "value: \"4\"\n",
            "--max-log-requests=4 > shards.log\n",
        ] {
            assert!(m.contains(want), "{want:?} in\n{m}");
        }
        assert!(!m.contains("topologySpreadConstraints"));
        assert!(!m.contains("resources:"));
        let m = manifest(&JobSpec {
            spread: true,
            cpu: Some("2".into()),
            namespace: Some("load".into()),
            ..spec()
        });
        assert!(m.contains("topologySpreadConstraints:"), "{m}");
        assert!(m.contains("batch.kubernetes.io/job-name: \"spate\""), "{m}");
        assert_eq!(
            m.matches("cpu: \"2\"").count(),
            2,
            "requested and limited: {m}"
        );
        assert!(m.contains("namespace: \"load\""));
    }

    #[test]
    fn a_job_name_is_a_dns_label() {
        assert!(check_name("spate-load-1").is_ok());
        for bad in ["", "Spate", "-a", "a-", "a_b", &"a".repeat(64)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
