//! HOT: runs a `Plan`: resolves the target once, starts one OS thread per `--threads` (each a
//! tokio current-thread runtime), pre-connects every connection before the clock starts, then
//! releases all threads at once and merges their `Stats` when they finish. Never prints.

mod attempt;
mod backoff;
mod control;
mod cpu;
mod drive;
mod follow;
mod h1_conn;
mod hops;
mod limits;
mod open;
mod pace;
mod shared;
mod slot;
mod split;
mod task_set;
mod tasks;
mod thread;

use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::clock::Tick;
use crate::net::{ClientSettings, TlsClient, TlsSetupError};
use crate::plan::{Plan, PlanError, Protocol, Stop};
use crate::proto::h2 as lane_h2;
use crate::request;
use crate::stats::{Failure, NotOpened, RunOutput};
pub use shared::LaneChoice;
use shared::{Limit, Setup};
use thread::{Finished, Go, Paced, Ready};

pub use control::Control;
pub use limits::raise_nofile;

/// Checks that `sockets` fit under the open-file limit; `Err` is the line that says how to make
/// room for `-c connections`.
pub fn check_nofile(sockets: u32, threads: u32, connections: u32) -> Result<(), String> {
    limits::check(sockets, threads).map_err(|(needed, l)| limits::advice(connections, needed, l))
}

/// Connects in flight at once across all threads while pre-connecting.
pub const CONNECT_CONCURRENCY: usize = 256;

/// Longest wait for in-flight requests after the deadline of a duration run (capped by the
/// request timeout). Whatever is still in flight then is counted as interrupted.
pub const MAX_DRAIN: Duration = Duration::from_secs(1);

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Resolve(#[from] crate::route::RouteError),
    #[error("cannot connect to {target}: {reason}")]
    Unreachable {
        target: String,
        class: Failure,
        reason: String,
    },
    #[error("TLS: {0}")]
    Tls(#[from] TlsSetupError),
    #[error("cannot build the HTTP/2 request: {0}")]
    Request(String),
    /// The plan needs more open files than the limit allows (the line says how to raise it).
    #[error("{0}")]
    FileLimit(String),
    #[error("cannot start the load threads: {0}")]
    Threads(std::io::Error),
}

impl RunError {
    /// A stable word for the kind of failure, for programs (the JSON's `error.kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            RunError::Plan(_) => "plan",
            RunError::Resolve(_) => "resolve",
            RunError::Unreachable { .. } => "unreachable",
            RunError::Tls(_) => "tls_setup",
            RunError::Request(_) => "request",
            RunError::FileLimit(_) => "file_limit",
            RunError::Threads(_) => "threads",
        }
    }
}

/// Which protocol the connections of `plan` speak, or how they choose it.
pub fn lane_choice(plan: &Plan) -> LaneChoice {
    match (plan.protocol, plan.target.tls) {
        // Redirects are followed over HTTP/1.1 only.
        _ if plan.redirects > 0 => LaneChoice::Http1,
        (Protocol::Http1, _) | (Protocol::Auto, false) => LaneChoice::Http1,
        (Protocol::Http2, _) => LaneChoice::Http2,
        (Protocol::Auto, true) => LaneChoice::Alpn,
    }
}

/// The TLS client of `plan`'s connections (ALPN as the lane choice says); `None` without TLS.
pub fn tls_client(plan: &Plan) -> Result<Option<TlsClient>, TlsSetupError> {
    if !plan.target.tls {
        return Ok(None);
    }
    let alpn: Vec<Vec<u8>> = match lane_choice(plan) {
        LaneChoice::Http1 => vec![b"http/1.1".to_vec()],
        LaneChoice::Http2 => vec![b"h2".to_vec()],
        LaneChoice::Alpn => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
    };
    let settings = ClientSettings {
        insecure: plan.tls.insecure,
        cacert: plan.tls.cacert.as_deref(),
        cert: plan.tls.cert.as_deref(),
        key: plan.tls.key.as_deref(),
        alpn,
    };
    Ok(Some(TlsClient::new(&plan.target.host, &settings)?))
}

/// What --redirect needs, or `None` without it. TLS for the origins redirects lead to is set up
/// now, even for an http:// URL, but its failure matters only to a hop to https://.
fn follow(plan: &Plan) -> Option<Arc<hops::Follow>> {
    if plan.redirects == 0 {
        return None;
    }
    let https = Plan {
        target: crate::target::Target {
            tls: true,
            ..plan.target.clone()
        },
        ..plan.clone()
    };
    Some(Arc::new(hops::Follow {
        plan: plan.clone(),
        limit: plan.redirects,
        tls: match tls_client(&https) {
            Ok(Some(tls)) => Ok(tls),
            Ok(None) => Err("no TLS".into()),
            Err(e) => Err(e.to_string()),
        },
    }))
}

/// Runs `plan` to its end, with no display and no way to stop it early.
pub fn run(plan: &Plan) -> Result<RunOutput, RunError> {
    run_with(plan, &Control::new())
}

/// Runs `plan`; `control` can stop it early and carries the live views for a display.
pub fn run_with(plan: &Plan, control: &Control) -> Result<RunOutput, RunError> {
    plan.validate()?;
    crate::clock::init();
    check_nofile(plan.connections, plan.effective_threads(), plan.connections)
        .map_err(RunError::FileLimit)?;
    let t = Instant::now();
    let endpoint = Arc::new(plan.route.resolve(&plan.target)?);
    let dns = t.elapsed();

    let threads = plan.effective_threads() as usize;
    let lane = lane_choice(plan);
    let tls = tls_client(plan)?;
    let connecting = Instant::now();
    let setup = Setup {
        request: request::h1_bytes(plan),
        request_close: request::h1_bytes(&Plan {
            keep_alive: false,
            ..plan.clone()
        }),
        tunnel: request::tunnel_bytes(plan),
        retry_safe: plan.is_idempotent(),
        // Only where HTTP/2 may be spoken: HTTP/1.1 accepts requests HTTP/2 cannot carry.
        h2_request: if plan.may_use_h2() {
            request::h2_prepared(plan).map_err(RunError::Request)?
        } else {
            Default::default()
        },
        streams: if plan.may_use_h2() {
            plan.h2.streams as usize
        } else {
            1
        },
        lane,
        tls,
        h2: lane_h2::Settings {
            stream_window: plan.h2.stream_window,
            conn_window: plan.h2.conn_window,
            max_frame: plan.h2.max_frame,
        },
        head_request: plan.is_head(),
        rpc: plan.requests_per_connection(),
        busy_poll: plan.busy_poll,
        timeout: plan.timeout,
        connect_timeout: plan.connect_timeout,
        endpoint: endpoint.clone(),
        connections: 0,
        drain: plan.timeout.min(MAX_DRAIN),
        setup_deadline: connecting + plan.setup_timeout,
        setup_timeout: plan.setup_timeout,
        stop: control.stop_flag(),
        live: None,
        follow: follow(plan),
    };
    let per_thread = split::even(u64::from(plan.connections), threads);
    let connect_limit = CONNECT_CONCURRENCY.div_ceil(threads);

    let (ready_tx, ready_rx) = mpsc::channel::<Ready>();
    let mut go_txs = Vec::with_capacity(threads);
    let mut handles = Vec::with_capacity(threads);
    for (i, &n) in per_thread.iter().enumerate() {
        let (go_tx, go_rx) = mpsc::channel::<Go>();
        let setup = Setup {
            connections: n as usize,
            live: control.live().get(i).cloned(),
            ..setup.clone()
        };
        let ready = ready_tx.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("spate-{i}"))
            .spawn(move || thread::run(i, setup, connect_limit, ready, go_rx));
        match spawned {
            Ok(h) => {
                handles.push(h);
                go_txs.push(go_tx);
            }
            Err(e) => {
                drop(go_txs);
                for h in handles {
                    let _ = h.join();
                }
                return Err(RunError::Threads(e));
            }
        }
    }
    drop(ready_tx);

    let mut established = vec![0u64; threads];
    let mut first_error = None;
    let mut not_opened = NotOpened::default();
    for r in ready_rx.iter().take(threads) {
        established[r.thread] = r.established;
        not_opened += r.not_opened;
        if first_error.is_none() {
            first_error = r.first_error;
        }
    }
    let setup_time = connecting.elapsed();
    if established.iter().all(|&n| n == 0) {
        drop(go_txs);
        let finished = join(handles);
        return Err(match finished {
            Err(e) => e,
            Ok(_) => RunError::Unreachable {
                target: endpoint.describe(),
                class: first_error.as_ref().map_or(Failure::Connect, |(c, _)| *c),
                reason: match first_error {
                    // TCP connected, but the HTTP/2 preface went unanswered: the usual cause is a
                    // server that speaks only HTTP/1.1 on a plain port.
                    Some((Failure::Closed | Failure::H2 | Failure::Read, e))
                        if lane == LaneChoice::Http2 && !plan.target.tls =>
                    {
                        format!(
                            "the HTTP/2 handshake failed ({e}); does the server speak HTTP/2 \
                             without TLS (h2c)? Without --http2, spate speaks HTTP/1.1"
                        )
                    }
                    Some((_, e)) => e,
                    None => "no connection could be opened".into(),
                } + &unopened(plan, &not_opened),
            },
        });
    }

    let start = Instant::now();
    let start_unix_ms = crate::stats::unix_ms(std::time::SystemTime::now() + plan.warmup);
    control.mark_started(start);
    let window_start = start + plan.warmup;
    let budgets = match plan.stop {
        Stop::Requests(n) => split::proportional(n, &established),
        Stop::Duration(_) => vec![0; threads],
    };
    let drain_end = match plan.stop {
        Stop::Duration(d) => Some(window_start + d + plan.timeout.min(MAX_DRAIN)),
        Stop::Requests(_) => None,
    };
    let warmup_end = (!plan.warmup.is_zero()).then_some(window_start);
    let window_end = match plan.stop {
        Stop::Duration(d) => Some(window_start + d),
        Stop::Requests(_) => None,
    };
    // Open model: one global schedule, interleaved over the threads that have connections.
    let active: Vec<usize> = (0..threads).filter(|&k| established[k] > 0).collect();
    let whole = plan
        .rate
        .map(|r| pace::Schedule::new(start, u128::from(r.num), u128::from(r.den)));
    for (k, tx) in go_txs.iter().enumerate() {
        let rank = active.iter().position(|&a| a == k);
        let (limit, paced) = match (whole, rank, plan.stop) {
            // Stopped while connecting: run nothing, report what there is.
            _ if control.stop_requested() => (Limit::Closed, None),
            (None, _, Stop::Requests(_)) => (Limit::Budget(budgets[k]), None),
            (None, _, Stop::Duration(d)) => (Limit::Deadline(Tick::of(window_start + d)), None),
            (Some(_), None, _) => (Limit::Closed, None),
            (Some(whole), Some(rank), stop) => {
                let schedule = whole.share(rank as u64, active.len() as u64);
                let first = whole.global_count_before(window_start);
                let recorded_from = schedule.count_below(first);
                let end = match stop {
                    Stop::Requests(n) => schedule.count_below(first + n),
                    Stop::Duration(d) => schedule.count_before(window_start + d),
                };
                let paced = Paced {
                    schedule,
                    recorded_from,
                    end,
                    max_lag: plan.max_lag,
                };
                (Limit::Paced, Some(paced))
            }
        };
        // A thread that already died shows up when joined.
        let _ = tx.send(Go {
            limit,
            window_start,
            drain_end,
            window_end,
            warmup_end,
            paced,
        });
    }
    drop(go_txs);

    let finished = join(handles)?;
    let end = finished.iter().fold(window_start, |e, f| e.max(f.end));
    let interrupted = control.stop_requested() || finished.iter().any(|f| f.interrupted);
    // A duration run lasts its -z, even when its schedule ran out earlier; a stopped run lasts
    // until the stop (the latest any thread noticed it).
    let measured_end = match (interrupted, window_end) {
        (false, Some(deadline)) => deadline,
        _ => finished
            .iter()
            .filter_map(|f| f.window_end)
            .max()
            .unwrap_or(end),
    };
    let cpu = finished
        .iter()
        .try_fold(Duration::ZERO, |a, f| f.cpu.map(|b| a + b));
    // The first thread's stats become the total: a fresh one would allocate eight more 270 KiB
    // histograms, and the allocator zeroes part of each, which makes them resident.
    let mut each = finished.into_iter().map(|f| f.stats);
    let mut stats = each.next().unwrap_or_default();
    for s in each {
        stats += &s;
    }
    Ok(RunOutput {
        stats,
        elapsed: measured_end.saturating_duration_since(window_start),
        drain: end.saturating_duration_since(measured_end),
        wall: end.saturating_duration_since(start),
        dns,
        setup: setup_time,
        threads: threads as u32,
        window_start,
        start_unix_ms,
        cpu,
        interrupted,
        nofile_limit: limits::nofile().soft,
        cores: std::thread::available_parallelism()
            .ok()
            .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX)),
    })
}

fn join(
    handles: Vec<std::thread::JoinHandle<std::io::Result<Finished>>>,
) -> Result<Vec<Finished>, RunError> {
    let mut out = Vec::with_capacity(handles.len());
    let mut err = None;
    for h in handles {
        match h.join() {
            Ok(Ok(f)) => out.push(f),
            Ok(Err(e)) => err = Some(RunError::Threads(e)),
            Err(_) => {
                err = Some(RunError::Threads(std::io::Error::other(
                    "a load thread panicked",
                )))
            }
        }
    }
    match err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// What became of the connections when none opened, unless there was only one reason (the
/// first error then says it all).
fn unopened(plan: &Plan, n: &NotOpened) -> String {
    let parts: Vec<String> = [
        (n.timed_out, "timed out connecting".to_string()),
        (n.failed, "failed".to_string()),
        (
            n.cut_off,
            format!(
                "still connecting when --setup-timeout {:?} ended",
                plan.setup_timeout
            ),
        ),
        (n.not_tried, "not tried in time".to_string()),
    ]
    .into_iter()
    .filter(|(k, _)| *k > 0)
    .map(|(k, what)| format!("{k} {what}"))
    .collect();
    match parts.len() {
        0 | 1 if n.cut_off + n.not_tried == 0 => String::new(),
        _ => format!(
            "; none of {} connections opened: {}",
            plan.connections,
            parts.join(", ")
        ),
    }
}
