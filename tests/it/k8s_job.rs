//! `spate k8s-job`: the manifest validates offline against Kubernetes' own schemas (PyPI's
//! `kubernetes-validate --strict`, which no one here wrote, for three Kubernetes versions), and
//! its pods' arguments, run as the pods would run them (their completion index in the
//! environment) with their logs interleaved as `kubectl logs --prefix` gives them, merge into
//! the job: the server's own count.

use std::process::{Command, Stdio};

use serde_json::Value;
use spate::serve::ServeConfig;

use crate::support::{builtin, spate, test_python, usage_error};

fn manifest(extra: &[&str], run: &[&str]) -> String {
    let args: Vec<&str> = ["k8s-job", "--image", "registry.example/spate:1"]
        .into_iter()
        .chain(extra.iter().copied())
        .chain(["--"])
        .chain(run.iter().copied())
        .collect();
    let out = spate(&args);
    crate::support::succeeded(&out);
    String::from_utf8(out.stdout).unwrap()
}

/// The container's arguments, as the manifest lists them (each a JSON string).
fn pod_args(manifest: &str) -> Vec<String> {
    manifest
        .lines()
        .skip_while(|l| l.trim() != "args:")
        .skip(1)
        .map_while(|l| l.trim().strip_prefix("- "))
        .map(|s| serde_json::from_str(s).unwrap())
        .collect()
}

#[test]
fn the_manifest_is_a_valid_indexed_job_for_kubernetes() {
    let Some(python) = test_python("kubernetes_validate") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("spate-it-k8s-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let validate = |text: &str, version: &str| {
        let path = dir.join("job.yaml");
        std::fs::write(&path, text).unwrap();
        Command::new(&python)
            .args(["-m", "kubernetes_validate", "--strict", "-k", version])
            .arg(&path)
            .output()
            .unwrap()
    };
    let plain = manifest(
        &["--shards", "4"],
        &["-c", "400", "-z", "60s", "http://svc:8080/"],
    );
    let full = manifest(
        &[
            "--shards",
            "8",
            "--name",
            "load-7",
            "--namespace",
            "bench",
            "--spread",
            "--cpu",
            "2",
            "--memory",
            "512Mi",
        ],
        &[
            "-c",
            "800",
            "-q",
            "8000",
            "-z",
            "5m",
            "-H",
            "Authorization: Bearer x: y",
            "--metrics-listen",
            "0.0.0.0:9464",
            "--metrics-linger",
            "30s",
            "http://svc/",
        ],
    );
    assert!(full.contains("prometheus.io/port: \"9464\""), "{full}");
    // With files: a ConfigMap before the Job, mounted at the paths the flags give.
    let scratch = crate::support::ScratchDir::new("k8s-files");
    std::fs::write(scratch.0.join("a.lua"), "wrk.method = 'POST'\n").unwrap();
    std::fs::write(scratch.0.join("body.json"), "{}").unwrap();
    let with_files = manifest(
        &["--shards", "2", "--namespace", "bench"],
        &[
            "-s",
            &scratch.file("a.lua"),
            "-D",
            &scratch.file("body.json"),
            "http://svc/",
        ],
    );
    assert!(with_files.contains("kind: ConfigMap"), "{with_files}");
    for m in [&plain, &full, &with_files] {
        for version in ["1.30.0", "1.33.0", "1.37.0"] {
            let out = validate(m, version);
            assert!(
                out.status.success(),
                "{version}: {}{}\n{m}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    // The validator has teeth: a field Kubernetes does not have is refused.
    let wrong = plain.replace("backoffLimit: 0", "backoffLimit: 0\n  retries: 3");
    assert!(!validate(&wrong, "1.37.0").status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn its_pods_run_the_shards_and_their_logs_merge_into_the_job() {
    let server = builtin(ServeConfig::default());
    let m = manifest(
        &[
            "--shards",
            "3",
            "--start-in",
            "2s",
            "--start-deadline",
            "10s",
        ],
        &["-c", "6", "-n", "999", &server.url()],
    );
    let args = pod_args(&m);
    assert_eq!(args[0], "--shard-from-env");
    let pods: Vec<_> = (0..3)
        .map(|i| {
            Command::new(env!("CARGO_BIN_EXE_spate"))
                .args(&args)
                .env("JOB_COMPLETION_INDEX", i.to_string())
                .env("SPATE_SHARDS", "3")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Each pod's log: its stderr and stdout, every line prefixed with the pod's name.
    let logs: Vec<Vec<String>> = pods
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            let out = p.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8_lossy(&out.stderr).into_owned()
                + &String::from_utf8_lossy(&out.stdout);
            text.lines()
                .map(|l| format!("[pod/spate-{i}-x/spate] {l}"))
                .collect()
        })
        .collect();
    // kubectl interleaves the pods' lines: one line of each in turn.
    let longest = logs.iter().map(Vec::len).max().unwrap();
    let mut all = String::new();
    for k in 0..longest {
        for log in &logs {
            if let Some(l) = log.get(k) {
                all.push_str(l);
                all.push('\n');
            }
        }
    }
    let dir = std::env::temp_dir().join(format!("spate-it-k8s-logs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("shards.log");
    std::fs::write(&path, all).unwrap();
    let out = spate(&["merge", "--format", "json", path.to_str().unwrap()]);
    let _ = std::fs::remove_dir_all(&dir);
    crate::support::succeeded(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::schema::validate_against("docs/merge-schema.json", &doc);
    assert_eq!(doc["job"]["shards"], 3);
    assert_eq!(doc["requests"]["completed"], 999);
    assert_eq!(server.requests(), 999, "the server's own count");
}

#[test]
fn flags_the_manifest_sets_and_runs_a_shard_cannot_make_are_refused() {
    for (run, says) in [
        (
            vec!["--shard", "1/2", "http://a/"],
            "--shard is the manifest's",
        ),
        (
            vec!["--start-at", "+1s", "http://a/"],
            "--start-at is the manifest's",
        ),
        (
            vec!["-c", "3", "http://a/"],
            "leaves this one no connection",
        ),
        (vec!["-c", "8", "not a url"], "the run:"),
    ] {
        let args: Vec<&str> = ["k8s-job", "--shards", "4", "--image", "x", "--"]
            .into_iter()
            .chain(run)
            .collect();
        let err = usage_error(&args);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let err = usage_error(&[
        "k8s-job",
        "--shards",
        "2",
        "--image",
        "x",
        "--name",
        "Big",
        "--",
        "http://a/",
    ]);
    assert!(err.contains("is not a Job name"), "{err}");
}

#[test]
fn bad_namespaces_quantities_and_pod_only_flags_are_refused() {
    let k8s = |extra: &[&str], run: &[&str]| -> String {
        let args: Vec<&str> = ["k8s-job", "--shards", "2", "--image", "x"]
            .into_iter()
            .chain(extra.iter().copied())
            .chain(["--"])
            .chain(run.iter().copied())
            .collect();
        usage_error(&args)
    };
    let url = ["http://a/"];
    for (extra, says) in [
        (&["--namespace", "Load Test"][..], "is not a namespace"),
        (&["--namespace", &"n".repeat(64)][..], "is not a namespace"),
        (
            &["--cpu", "two"][..],
            "--cpu \"two\" is not a Kubernetes quantity",
        ),
        (
            &["--memory", "512MB"][..],
            "--memory \"512MB\" is not a Kubernetes quantity",
        ),
        (&["--cpu", "0"][..], "is zero"),
    ] {
        let err = k8s(extra, &url);
        assert!(err.contains(says), "{extra:?}: {err}");
    }
    for (run, says) in [
        (
            &["--save", "r.json", "http://a/"][..],
            "--save would write in a pod",
        ),
        (
            &["--html", "r.html", "http://a/"][..],
            "--html would write in a pod",
        ),
        (
            &["--csv-timeline", "t.csv", "http://a/"][..],
            "--csv-timeline would write",
        ),
        (
            &["--hdr-log", "h.log", "http://a/"][..],
            "--hdr-log would write",
        ),
        (
            &["--baseline", "b.json", "http://a/"][..],
            "--baseline judges a whole run",
        ),
        (
            &["--live-json", "l.jsonl", "http://a/"][..],
            "--live-json would write in a pod",
        ),
        (
            &["--metrics-listen", "9464", "http://a/"][..],
            "give --metrics-listen 0.0.0.0:9464",
        ),
        (
            &["--unix-socket", "/s", "http://a/"][..],
            "--unix-socket names a socket",
        ),
        (
            &["-s", "/nonexistent.lua", "http://a/"][..],
            "cannot read --script",
        ),
        (
            &["-D", "../up.json", "http://a/"][..],
            "cannot read --body-file",
        ),
    ] {
        let err = k8s(&[], run);
        assert!(err.contains(says), "{run:?}: {err}");
    }
}

#[test]
fn a_script_is_compiled_not_run_and_travels_with_the_job() {
    let dir = crate::support::ScratchDir::new("k8s-script");
    let marker = dir.0.join("ran");
    let script = dir.0.join("shape.lua");
    std::fs::write(
        &script,
        format!(
            "os.execute('touch {}')\nwrk.path = '/shipped'\nfunction init() os.exit(3) end\n",
            marker.display()
        ),
    )
    .unwrap();
    let m = manifest(
        &["--shards", "2"],
        &["-s", script.to_str().unwrap(), "http://svc/"],
    );
    assert!(!marker.exists(), "printing the manifest ran the script");
    assert!(m.contains("kind: ConfigMap"), "{m}");
    assert!(
        m.contains(&format!("mountPath: \"{}\"", script.display())),
        "{m}"
    );
    // The shipped bytes are the script's.
    let b64 = m
        .lines()
        .find_map(|l| l.trim().strip_prefix("f0: "))
        .unwrap();
    let b64: String = serde_json::from_str(b64).unwrap();
    use base64::Engine as _;
    let shipped = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    assert_eq!(shipped, std::fs::read(&script).unwrap());
    // A syntax error is found without running anything either.
    std::fs::write(&script, "os.execute('touch x')\nwrk.path = \n").unwrap();
    let err = usage_error(&[
        "k8s-job",
        "--shards",
        "2",
        "--image",
        "x",
        "--",
        "-s",
        script.to_str().unwrap(),
        "http://svc/",
    ]);
    assert!(err.contains("shape.lua:3:"), "{err}");
    assert!(!marker.exists());
}

#[test]
fn the_manifest_reads_back_as_the_exact_command_in_yaml_1_1_and_1_2() {
    let Some(python) = test_python("ruamel.yaml") else {
        return;
    };
    let header =
        "X-Odd: del\u{7f} nel\u{85} csi\u{9b} ls\u{2028} bom\u{feff} tab\t \"q\" \\ é 新 🎉";
    let m = manifest(
        &["--shards", "2"],
        &["-H", header, "-c", "2", "http://svc/"],
    );
    let dir = crate::support::ScratchDir::new("k8s-yaml");
    let file = dir.file("job.yaml");
    std::fs::write(&file, &m).unwrap();
    // Each parser prints the container's args as JSON (ASCII only, so nothing is lost on the way).
    let read = |code: &str| -> Vec<String> {
        let out = Command::new(&python)
            .args(["-c", code, &file])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let pyyaml = read(
        "import json, sys, yaml\n\
         docs = [d for d in yaml.safe_load_all(open(sys.argv[1], encoding='utf-8')) if d]\n\
         job = [d for d in docs if d['kind'] == 'Job'][0]\n\
         print(json.dumps(job['spec']['template']['spec']['containers'][0]['args']))",
    );
    let ruamel = read(
        "import json, sys\n\
         from ruamel.yaml import YAML\n\
         docs = [d for d in YAML(typ='safe').load_all(open(sys.argv[1], encoding='utf-8')) if d]\n\
         job = [d for d in docs if d['kind'] == 'Job'][0]\n\
         print(json.dumps(list(job['spec']['template']['spec']['containers'][0]['args'])))",
    );
    let args = pod_args(&m);
    assert!(args.iter().any(|a| a == header), "{args:?}");
    assert_eq!(pyyaml, args);
    assert_eq!(ruamel, args);
}
