//! `spate k8s-job`: a Kubernetes Indexed Job whose pods are the shards of one job. Each pod
//! runs spate with `--shard-from-env` (its completion index) at one `--start-at` instant, and
//! prints its result between marker lines (`--log-result`) for `spate merge` to find in the
//! pods' logs. The files the run's flags name travel with it in a ConfigMap, mounted in each
//! pod where the flag says. The manifest is YAML written here: every value that comes from the
//! user is a double-quoted scalar with every character YAML may not hold raw escaped, which
//! YAML 1.1 and 1.2 parsers read back as the same string. Pure: runs and reads nothing.

use std::fmt::Write as _;
use std::path::{Component, Path};
use std::time::{Duration, SystemTime};

use base64::Engine as _;

/// Where a relative path the run names is, in the pod: its working directory.
pub const POD_DIR: &str = "/spate";

/// A ConfigMap holds at most 1 MiB; the files together may have this much.
pub const FILES_LIMIT: usize = 900 << 10;

/// A file the run's flags name (`-s`, `-D`, `--urls-from-file`, `--cacert`...), shipped in the
/// Job's ConfigMap and mounted in each pod at the path the flag gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Shipped {
    /// Where the pod finds it: the path as given if absolute, else under `POD_DIR`.
    pub mount: String,
    pub bytes: Vec<u8>,
}

impl Shipped {
    /// The file at `path` (as the run's flag gives it) with its bytes; `Err` for a path that
    /// leaves its directory (`..`), which has no place in the pod.
    pub fn new(path: &Path, bytes: Vec<u8>) -> Result<Shipped, String> {
        let mut mount = match path.is_absolute() {
            true => String::new(),
            false => POD_DIR.to_string(),
        };
        for c in path.components() {
            match c {
                Component::Normal(part) => {
                    let part = part.to_str().ok_or_else(|| {
                        format!("{}: a path in the pod must be UTF-8", path.display())
                    })?;
                    mount.push('/');
                    mount.push_str(part);
                }
                Component::RootDir | Component::CurDir => {}
                Component::ParentDir | Component::Prefix(_) => {
                    return Err(format!(
                        "{}: give the path without '..' (it is mounted at the same path in each pod)",
                        path.display()
                    ));
                }
            }
        }
        if mount.is_empty() || mount == POD_DIR {
            return Err(format!("{}: not a file's path", path.display()));
        }
        Ok(Shipped { mount, bytes })
    }
}

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
    /// The files those flags name, each at its own mount path.
    pub files: Vec<Shipped>,
    /// --metrics-listen's port: the pods say it to Prometheus (the `prometheus.io/*`
    /// annotations its Kubernetes discovery is commonly set up to read).
    pub metrics_port: Option<u16>,
}

/// `s` as a YAML double-quoted scalar: quote, backslash and tab escaped, and every character
/// that YAML does not allow raw (C0, DEL, C1, U+FFFE and U+FFFF) or that a parser may take for
/// a line break or a mark (NEL, LS, PS, the byte order mark) written as `\uXXXX`, which YAML
/// 1.1 and 1.2 both read.
fn q(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            ' '..='~' => o.push(c),
            '\t' => o.push_str("\\t"),
            c if u32::from(c) >= 0xa0
                && !matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                o.push(c);
            }
            c => {
                let _ = write!(o, "\\u{:04x}", u32::from(c));
            }
        }
    }
    o.push('"');
    o
}

/// The fuzzed property (fuzz/fuzz_targets/outside.rs): `q` makes one line of characters YAML
/// takes raw, and its escapes (JSON's own) read back as the value.
pub fn check_quoted(value: &str) {
    let quoted = q(value);
    assert!(quoted.starts_with('"') && quoted.ends_with('"') && quoted.len() >= 2);
    for c in quoted.chars() {
        let raw_ok = matches!(c, ' '..='~')
            || (u32::from(c) >= 0xa0
                && !matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ));
        assert!(raw_ok, "{c:?} written raw for {value:?}");
    }
    let back: String = serde_json::from_str(&quoted).expect("the escapes are JSON's");
    assert_eq!(back, value);
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
    let files = format!("{}-files", j.name);
    if !j.files.is_empty() {
        line(format!(
            "# The files the run names travel in the ConfigMap {files}, mounted where it names them."
        ));
        line("apiVersion: v1".into());
        line("kind: ConfigMap".into());
        line("metadata:".into());
        line(format!("  name: {}", q(&files)));
        if let Some(ns) = &j.namespace {
            line(format!("  namespace: {}", q(ns)));
        }
        line("  labels:".into());
        line("    app.kubernetes.io/name: spate".into());
        line("binaryData:".into());
        for (i, f) in j.files.iter().enumerate() {
            let b64 = base64::engine::general_purpose::STANDARD.encode(&f.bytes);
            line(format!("  f{i}: {}", q(&b64)));
        }
        line("---".into());
    }
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
    if let Some(port) = j.metrics_port {
        line("      annotations:".into());
        line("        prometheus.io/scrape: \"true\"".into());
        line(format!("        prometheus.io/port: \"{port}\""));
        line("        prometheus.io/path: \"/metrics\"".into());
    }
    line("    spec:".into());
    line("      restartPolicy: Never".into());
    if j.spread {
        // At most one of the Job's pods a node: a pod with no node to itself waits (and its
        // shard is then late), rather than share a machine's network and CPU.
        line("      affinity:".into());
        line("        podAntiAffinity:".into());
        line("          requiredDuringSchedulingIgnoredDuringExecution:".into());
        line("            - topologyKey: kubernetes.io/hostname".into());
        line("              labelSelector:".into());
        line("                matchLabels:".into());
        line(format!("                  {JOB_LABEL}: {}", q(&j.name)));
    }
    if !j.files.is_empty() {
        line("      volumes:".into());
        line("        - name: files".into());
        line("          configMap:".into());
        line(format!("            name: {}", q(&files)));
    }
    line("      containers:".into());
    line("        - name: spate".into());
    line(format!("          image: {}", q(&j.image)));
    if j.files
        .iter()
        .any(|f| f.mount.starts_with(&format!("{POD_DIR}/")))
    {
        line(format!("          workingDir: {}", q(POD_DIR)));
    }
    if !j.files.is_empty() {
        line("          volumeMounts:".into());
        for (i, f) in j.files.iter().enumerate() {
            line("            - name: files".into());
            line(format!("              mountPath: {}", q(&f.mount)));
            line(format!("              subPath: \"f{i}\""));
            line("              readOnly: true".into());
        }
    }
    if let Some(port) = j.metrics_port {
        line("          ports:".into());
        line("            - name: metrics".into());
        line(format!("              containerPort: {port}"));
    }
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
/// names and labels), and 57 here, so that its ConfigMap's name (`-files` after it) is one too.
pub fn check_name(name: &str) -> Result<(), String> {
    check_label(name, 57).map_err(|why| format!("{name:?} is not a Job name: {why}"))
}

/// A namespace's name: a DNS label (RFC 1123) of at most 63 characters.
pub fn check_namespace(ns: &str) -> Result<(), String> {
    check_label(ns, 63).map_err(|why| format!("{ns:?} is not a namespace: {why}"))
}

fn check_label(s: &str, most: usize) -> Result<(), String> {
    let ok = !s.is_empty()
        && s.len() <= most
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-');
    match ok {
        true => Ok(()),
        false => Err(format!(
            "lowercase letters, digits and '-', at most {most}, not starting or ending with '-'"
        )),
    }
}

/// A Kubernetes quantity more than zero (`2`, `500m`, `1.5`, `512Mi`, `1e3`): a decimal number
/// with an optional suffix, binary (Ki Mi Gi Ti Pi Ei), decimal (m k M G T P E) or an exponent.
pub fn check_quantity(q: &str) -> Result<(), String> {
    let end = q
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(q.len());
    let (number, suffix) = q.split_at(end);
    let digits = number.replace('.', "");
    let number_ok = !digits.is_empty() && number.matches('.').count() <= 1;
    let suffix_ok = matches!(
        suffix,
        "" | "m" | "k" | "M" | "G" | "T" | "P" | "E" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"
    ) || suffix
        .strip_prefix(['e', 'E'])
        .map(|x| x.strip_prefix(['+', '-']).unwrap_or(x))
        .is_some_and(|x| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit()));
    match (number_ok && suffix_ok, digits.bytes().any(|b| b != b'0')) {
        (true, true) => Ok(()),
        (true, false) => Err(format!("{q:?} is zero: a pod needs more than that")),
        (false, _) => Err(format!(
            "{q:?} is not a Kubernetes quantity (such as 2, 500m, 1.5, 512Mi, 2Gi)"
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
            files: Vec::new(),
            metrics_port: None,
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
        assert!(!m.contains("podAntiAffinity"));
        assert!(!m.contains("resources:"));
        assert!(!m.contains("prometheus.io"));
        let m = manifest(&JobSpec {
            metrics_port: Some(9464),
            ..spec()
        });
        for want in [
            "    metadata:\n      labels:\n        app.kubernetes.io/name: spate\n      annotations:\n        prometheus.io/scrape: \"true\"\n        prometheus.io/port: \"9464\"\n        prometheus.io/path: \"/metrics\"\n",
            "          ports:\n            - name: metrics\n              containerPort: 9464\n",
        ] {
            assert!(m.contains(want), "{want:?} in\n{m}");
        }
        let m = manifest(&JobSpec {
            spread: true,
            cpu: Some("2".into()),
            namespace: Some("load".into()),
            ..spec()
        });
        assert!(
            m.contains(
                "podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:"
            ),
            "{m}"
        );
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
        assert!(check_name(&"a".repeat(57)).is_ok());
        for bad in ["", "Spate", "-a", "a-", "a_b", &"a".repeat(58)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert!(check_namespace(&"a".repeat(63)).is_ok());
        for bad in ["", "Load", "a.b", "a b", "-x", &"a".repeat(64)] {
            assert!(check_namespace(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn quantities_are_kubernetes_quantities() {
        for good in [
            "2", "500m", "0.5", "1.5", ".5", "512Mi", "2Gi", "1e3", "1E+2", "100k",
        ] {
            assert_eq!(check_quantity(good), Ok(()), "{good}");
        }
        for bad in [
            "", "two", "2 cores", "-1", "1..2", "512MB", "1e", "2gi", "m", "1.2.3",
        ] {
            let e = check_quantity(bad).unwrap_err();
            assert!(e.contains("not a Kubernetes quantity"), "{bad}: {e}");
        }
        assert!(check_quantity("0").unwrap_err().contains("zero"));
        assert!(check_quantity("0.0Mi").unwrap_err().contains("zero"));
    }

    #[test]
    fn every_value_reads_back_as_it_was_in_yaml() {
        for (raw, written) in [
            ("plain", "\"plain\""),
            ("a \"b\": c", "\"a \\\"b\\\": c\""),
            ("back\\slash", "\"back\\\\slash\""),
            ("tab\tnul\0del\x7f", "\"tab\\tnul\\u0000del\\u007f\""),
            ("nel\u{85}csi\u{9b}", "\"nel\\u0085csi\\u009b\""),
            (
                "ls\u{2028}ps\u{2029}bom\u{feff}",
                "\"ls\\u2028ps\\u2029bom\\ufeff\"",
            ),
            ("é 新 🎉 \u{a0}", "\"é 新 🎉 \u{a0}\""),
        ] {
            assert_eq!(q(raw), written, "{raw:?}");
        }
    }

    #[test]
    fn the_fuzzed_property_holds_for_hostile_samples() {
        for v in [
            "",
            "\"",
            "\\",
            "\0\x7f\u{85}\u{2028}\u{feff}\u{ffff}",
            "tab\there",
            "新 🎉",
        ] {
            check_quoted(v);
        }
    }

    #[test]
    fn files_are_mounted_where_the_run_names_them() {
        let at = |p: &str| Shipped::new(Path::new(p), Vec::new()).map(|s| s.mount);
        assert_eq!(at("/etc/spate/x.lua").unwrap(), "/etc/spate/x.lua");
        assert_eq!(at("x.lua").unwrap(), "/spate/x.lua");
        assert_eq!(at("./d/./b.json").unwrap(), "/spate/d/b.json");
        assert!(at("../x.lua").unwrap_err().contains("without '..'"));
        assert!(at("/a/../x").is_err());
        assert!(at("/").is_err());
        let m = manifest(&JobSpec {
            files: vec![
                Shipped::new(Path::new("x.lua"), b"wrk.method = 'POST'".to_vec()).unwrap(),
                Shipped::new(Path::new("/certs/ca.pem"), vec![0, 255]).unwrap(),
            ],
            ..spec()
        });
        for want in [
            "kind: ConfigMap\n",
            "  name: \"spate-files\"\n",
            "  f0: \"d3JrLm1ldGhvZCA9ICdQT1NUJw==\"\n",
            "  f1: \"AP8=\"\n",
            "---\napiVersion: batch/v1\nkind: Job\n",
            "          workingDir: \"/spate\"\n",
            "              mountPath: \"/spate/x.lua\"\n              subPath: \"f0\"\n",
            "              mountPath: \"/certs/ca.pem\"\n              subPath: \"f1\"\n",
            "          configMap:\n            name: \"spate-files\"\n",
        ] {
            assert!(m.contains(want), "{want:?} in\n{m}");
        }
    }
}
