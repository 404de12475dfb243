//! The hot-path rule "nothing allocates per request", checked by counting: the same run with
//! 11 times more requests must not make more allocations. The count is global to the process,
//! so the probe runs alone, in a child process of this test binary. HTTP/1.1 runs against the
//! built-in server in the probe (it allocates nothing per request either); HTTP/2 against
//! `spate serve --h2c` in a process of its own, since the h2 crate under it allocates.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use spate::engine;
use spate::serve::{ServeConfig, Server};

use spate::plan::Protocol;

use crate::support::{plan, requests};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: delegates to the system allocator; the counter has no effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by a whole count-mode run of `n` requests on 4 connections, 2 threads
/// (HTTP/2: 4 streams each), and how long it took (ms).
fn allocations_for(url: &str, n: u64, h2: bool) -> (u64, u128) {
    let mut p = plan(url, 4, requests(n));
    if h2 {
        p.protocol = Protocol::Http2;
        p.h2.streams = 4;
    }
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let out = engine::run(&p).expect("run");
    let after = ALLOCATIONS.load(Ordering::SeqCst);
    assert_eq!(out.stats.completed, n);
    (after - before, out.wall.as_millis())
}

#[test]
#[ignore = "run alone by no_allocation_per_request, in a process of its own"]
fn probe() {
    let server = Server::start(&ServeConfig {
        addr: ([127, 0, 0, 1], 0).into(),
        ..ServeConfig::default()
    })
    .unwrap();
    let url = server.url();
    allocations_for(&url, 1_000, false); // warm-up: lazily built process-wide state
    let (small, small_ms) = allocations_for(&url, 2_000, false);
    let (large, large_ms) = allocations_for(&url, 22_000, false);
    println!("ALLOCATIONS small={small} large={large} small_ms={small_ms} large_ms={large_ms}");

    let mut h2c = Command::new(env!("CARGO_BIN_EXE_spate"))
        .args(["serve", "--port", "0", "--h2c"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(h2c.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_owned();
    allocations_for(&url, 1_000, true);
    let (small, small_ms) = allocations_for(&url, 2_000, true);
    let (large, large_ms) = allocations_for(&url, 22_000, true);
    let _ = h2c.kill();
    let _ = h2c.wait();
    println!("H2 small={small} large={large} small_ms={small_ms} large_ms={large_ms}");
}

#[test]
fn no_allocation_per_request() {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "alloc::probe",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "probe failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for tag in ["ALLOCATIONS ", "H2 "] {
        let line = text
            .lines()
            .find_map(|l| l.split_once(tag).map(|(_, rest)| rest))
            .expect("probe output");
        let num = |key: &str| -> u64 {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key)?.parse().ok())
                .unwrap()
        };
        let (small, large) = (num("small="), num("large="));
        // 20,000 more requests; one allocation per request would add 20,000. What grows with
        // time instead (a timeline entry a second, the sweeper's ticks) is allowed for the
        // longer run's extra time: on a busy machine it can take seconds more.
        let extra_s = num("large_ms=").saturating_sub(num("small_ms=")) / 1000;
        let allowed = small + 100 + 60 * extra_s;
        assert!(
            large <= allowed,
            "{tag}allocations grew with requests: {small} for 2,000 vs {large} for 22,000 \
             ({extra_s} s longer, {allowed} allowed)"
        );
        assert!(small > 0, "the counter counts");
    }
}
