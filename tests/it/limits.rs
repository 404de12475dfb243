//! Limits of the machine: the open-file limit raised at start and checked before the run, and
//! running out of local ports as its own failure class.

use std::process::{Command, Output};

use spate::serve::ServeConfig;

use crate::support::builtin;

/// Runs spate under `sh` after `setup` (ulimit, sysctl), so that the limits apply to it only.
fn spate_after(setup: &str, args: &str) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("{setup} && exec \"$0\" {args}"))
        .arg(env!("CARGO_BIN_EXE_spate"))
        .output()
        .unwrap()
}

#[test]
fn the_soft_file_limit_is_raised_to_the_hard_one() {
    let server = builtin(ServeConfig::default());
    let o = spate_after(
        "ulimit -Sn 256 && ulimit -Hn",
        &format!("-n 20 -c 2 --threads 1 --format json {}", server.url()),
    );
    crate::support::succeeded(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    let (hard, json) = out.split_once('\n').unwrap();
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    let soft = &v["generator"]["nofile_limit"];
    if hard.trim() == "unlimited" {
        assert!(soft.is_null() || soft.as_u64().unwrap() > 256, "{soft}");
    } else {
        assert_eq!(soft.as_u64(), hard.trim().parse().ok(), "raised from 256");
    }
}

#[test]
fn connections_beyond_the_file_limit_fail_before_the_run() {
    let server = builtin(ServeConfig::default());
    let o = spate_after(
        "ulimit -n 200",
        &format!("-n 1000 -c 1000 --threads 2 {}", server.url()),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("spate: -c 1000 needs about 1040 open files, but the limit is 200"),
        "{err}"
    );
    assert!(err.contains("ulimit -Hn 1040"), "{err}");
    assert!(o.stdout.is_empty());
    assert_eq!(server.requests(), 0, "nothing was sent");
}

/// In a network namespace of its own (needs root or user namespaces; skipped, and saying so,
/// where neither is allowed), with two local ports for four connections and no reuse of TIME_WAIT ones: a connection
/// per request runs out of ports, which must be the `ports` class with its insight.
#[test]
fn running_out_of_local_ports_is_its_own_class() {
    let probe = Command::new("unshare").args(["-n", "true"]).output();
    if !probe.is_ok_and(|o| o.status.success()) {
        if std::env::var_os("SPATE_REQUIRE_NETNS").is_some() {
            panic!("SPATE_REQUIRE_NETNS is set but unshare -n is not allowed");
        }
        eprintln!("skipped: unshare -n is not allowed here");
        return;
    }
    // The server is bounded by timeout(1) and its output closed, so it can neither outlive the
    // test nor hold the pipes that output() waits for.
    let script = r#"ip link set lo up \
        && sysctl -qw net.ipv4.ip_local_port_range="40000 40001" \
        && sysctl -qw net.ipv4.tcp_tw_reuse=0 \
        || exit 99
        timeout 20 "$0" serve --port 18181 >/dev/null 2>&1 </dev/null &
        server=$!
        sleep 0.3
        "$0" --rpc 1 -z 1s -c 4 --threads 1 --no-progress --format json http://127.0.0.1:18181/
        rc=$?
        kill $server
        exit $rc"#;
    let o = Command::new("unshare")
        .args(["-n", "sh", "-c", script, env!("CARGO_BIN_EXE_spate")])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&o.stderr));
    });
    let ports = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["class"] == "ports")
        .unwrap_or_else(|| panic!("no ports class: {}", v["errors"]));
    assert!(ports["count"].as_u64().unwrap() > 0);
    assert!(
        ports["example"].as_str().unwrap().contains("os error 99"),
        "{ports}"
    );
    let insight = v["insight"].to_string();
    assert!(insight.contains("no free local port"), "{insight}");
    let r = &v["requests"];
    assert_eq!(
        r["attempted"].as_u64(),
        Some(
            r["completed"].as_u64().unwrap()
                + r["failed"].as_u64().unwrap()
                + r["interrupted"].as_u64().unwrap()
        )
    );
}

#[test]
fn the_demo_counts_its_in_process_target_too() {
    let o = spate_after("ulimit -n 1500", "demo -c 1000 -z 1s --no-progress");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("share this process: -c 1000 needs about 20"),
        "{err}"
    );
}
