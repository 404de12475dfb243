//! A run in two steps: `prepare` resolves the target, starts the load threads and waits until
//! each has opened its connections; `Armed::go` (in `go`) starts the clock, lets the threads
//! run, and merges what they measured. Between the two, nothing is measured: a caller may wait
//! for a common start (shards) or prepare before it runs (compare). Prints nothing.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::engine::admit::staff::Staffing;
use crate::engine::run::split;
use crate::engine::run::thread::{self, Finished, Go, Ready};
use crate::engine::slots::shared::{H3Setup, LaneChoice, ScriptSetup, Setup};
use crate::engine::{
    CONNECT_CONCURRENCY, Control, MAX_DRAIN, RunError, check_nofile, join, lane_choice,
};
use crate::engine::{tls_client, unopened};
use crate::plan::{Plan, StageKind};
use crate::proto::h2 as lane_h2;
use crate::request;
use crate::route::Endpoint;
use crate::script::{Loaded, Seed};
use crate::stats::{Failure, NotOpened};

/// A prepared run: its threads connected and waiting for the start. Dropped without `go`, the
/// threads end and nothing is measured.
pub struct Armed<'a> {
    pub(super) plan: &'a Plan,
    pub(super) control: &'a Control,
    pub(super) threads: usize,
    pub(super) go_txs: Vec<mpsc::Sender<Go>>,
    pub(super) handles: Vec<std::thread::JoinHandle<std::io::Result<Finished>>>,
    /// Set when a thread's script failed and stopped the run.
    pub(super) script_halt: Arc<std::sync::atomic::AtomicBool>,
    /// Connections each thread opened.
    pub(super) established: Vec<u64>,
    pub(super) dns: Duration,
    pub(super) setup_time: Duration,
    /// `--alt-svc`: the alternative the run followed.
    pub(super) alt_svc: Option<String>,
}

/// Prepares `plan`: resolves the target, starts the load threads and waits until each has
/// opened its connections (or given up). `control` can stop it early and carries the live
/// views for a display. Nothing is measured until [`Armed::go`].
pub fn prepare<'a>(
    plan: &'a Plan,
    script: Option<&Loaded>,
    control: &'a Control,
) -> Result<Armed<'a>, RunError> {
    prepare_staged(plan, script, control, None)
}

/// As [`prepare`], with the script's setup state `stage`, whose `setup(thread)` is called for
/// each load thread once the target is resolved and before the thread starts. `script` is the
/// one `plan` names, loaded.
pub fn prepare_staged<'a>(
    plan: &'a Plan,
    script: Option<&Loaded>,
    control: &'a Control,
    stage: Option<&mut crate::script::Stage>,
) -> Result<Armed<'a>, RunError> {
    plan.validate()?;
    if script.map(|s| s.planned()) != plan.script {
        return Err(RunError::Script(match &plan.script {
            Some(s) => format!("--script {}: not loaded", s.file.display()),
            None => "a script was given to a plan that names none".into(),
        }));
    }
    // Late before connecting: as late after, nothing is sent (exit 4), and nothing opened.
    if let Some(at) = plan.start_at {
        crate::engine::run::start::too_late(at)?;
    }
    crate::clock::init();
    check_nofile(plan.connections, plan.effective_threads(), plan.connections)
        .map_err(RunError::FileLimit)?;
    let t = Instant::now();
    let endpoint = plan.route.resolve(&plan.target)?;
    let dns = t.elapsed();
    let (endpoint, alt_svc) = match plan.alt_svc {
        false => (Arc::new(endpoint), None),
        true => {
            let followed = crate::alt_svc::follow(plan, &endpoint).map_err(|reason| {
                RunError::Unreachable {
                    target: endpoint.describe(),
                    class: Failure::Connect,
                    reason,
                }
            })?;
            (
                Arc::new(followed.endpoint),
                Some(followed.alternative.describe()),
            )
        }
    };

    let threads = plan.effective_threads() as usize;
    let lane = lane_choice(plan);
    let tls = tls_client(plan)?;
    let quic = crate::engine::quic_client(plan)?;
    let connecting = Instant::now();
    let setup = Setup {
        request: request::h1_bytes(plan),
        request_close: request::h1_bytes(&Plan {
            keep_alive: false,
            ..plan.clone()
        }),
        tunnel: request::tunnel_bytes(plan),
        // A list's own requests say whether they may go again (`ListWork::again`).
        retry_safe: plan.is_idempotent() || plan.list.is_some(),
        // Only where HTTP/2 may be spoken: HTTP/1.1 accepts requests HTTP/2 cannot carry.
        h2_request: if plan.may_use_h2() {
            request::h2_prepared(plan).map_err(RunError::Request)?
        } else {
            Default::default()
        },
        streams: if plan.multiplexes() {
            plan.h2.streams as usize
        } else {
            1
        },
        lane,
        tls,
        h3: match quic {
            Some(quic) => Some(Arc::new(H3Setup {
                quic,
                request: Arc::new(request::h3_request(plan).map_err(RunError::Request)?),
            })),
            None => None,
        },
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
        idle: plan.stream.as_ref().and_then(|s| s.idle),
        feature: crate::engine::run::requests::feature(plan).map_err(RunError::Request)?,
        endpoint: endpoint.clone(),
        connections: 0,
        drain: plan.timeout.min(MAX_DRAIN),
        setup_deadline: connecting + plan.setup_timeout,
        setup_timeout: plan.setup_timeout,
        stop: control.stop_flag(),
        script_halt: Arc::default(),
        live: None,
        board: None,
        script: None,
        thread: 0,
        staff: None,
    };
    let seeds = match (script, stage) {
        (Some(s), _) if !s.per_thread() => None,
        (Some(_), Some(stage)) => {
            let first = match &*endpoint {
                Endpoint::Tcp(addrs) => addrs.first().copied(),
                Endpoint::Unix(_) => None,
            };
            Some(
                stage
                    .seeds(threads, first)
                    .map_err(|e| RunError::Script(e.to_string()))?,
            )
        }
        (Some(_), None) => Some(vec![Seed::default(); threads]),
        (None, _) => None,
    };
    let plan_arc = Arc::new(plan.clone());
    let per_thread = split::even(u64::from(plan.connections), threads);
    let connect_limit = CONNECT_CONCURRENCY.div_ceil(threads);

    let (ready_tx, ready_rx) = mpsc::channel::<Ready>();
    let mut go_txs = Vec::with_capacity(threads);
    let mut handles = Vec::with_capacity(threads);
    for (i, &n) in per_thread.iter().enumerate() {
        let (go_tx, go_rx) = mpsc::channel::<Go>();
        let seed = seeds.as_ref().map(|s| s[i].clone());
        let setup = Setup {
            connections: n as usize,
            thread: i,
            staff: plan
                .stages
                .as_ref()
                .filter(|s| s.kind == StageKind::Connections)
                .map(|s| {
                    let s = s.after_warmup(plan.warmup);
                    Arc::new(Staffing::new(s, plan.warmup, plan.shard, i, threads))
                }),
            live: control.live().get(i).cloned(),
            board: control.board().cloned(),
            // `thread.addr`: this thread connects there.
            endpoint: match seed.as_ref().and_then(|s| s.addr) {
                Some(addr) => Arc::new(Endpoint::Tcp(vec![addr])),
                None => setup.endpoint.clone(),
            },
            script: match (script, seed) {
                (Some(s), Some(seed)) => Some(ScriptSetup {
                    script: s.0.clone(),
                    plan: plan_arc.clone(),
                    seed,
                }),
                _ => None,
            },
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
    let mut script_error = None;
    let mut not_opened = NotOpened::default();
    let lua = script.is_some_and(|s| s.per_thread());
    for r in ready(&ready_rx, threads, lua.then_some((&handles, control))) {
        established[r.thread] = r.established;
        not_opened += r.not_opened;
        if first_error.is_none() {
            first_error = r.first_error;
        }
        if script_error.is_none() {
            script_error = r.script_error;
        }
    }
    if let Some(e) = script_error {
        drop(go_txs);
        let _ = join(handles);
        return Err(RunError::Script(e));
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
    Ok(Armed {
        script_halt: setup.script_halt.clone(),
        plan,
        control,
        threads,
        go_txs,
        handles,
        established,
        dns,
        setup_time,
        alt_svc,
    })
}

/// The `threads` reports of the threads' readiness. With `lua` (the threads run a script's Lua,
/// whose `init` may not return), Ctrl-C meanwhile interrupts the Lua of the threads still
/// running.
fn ready(
    rx: &mpsc::Receiver<Ready>,
    threads: usize,
    lua: Option<(
        &Vec<std::thread::JoinHandle<std::io::Result<Finished>>>,
        &Control,
    )>,
) -> Vec<Ready> {
    use std::os::unix::thread::JoinHandleExt as _;
    let mut got = Vec::with_capacity(threads);
    while got.len() < threads {
        let r = match lua {
            None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
            Some(_) => rx.recv_timeout(crate::engine::LUA_WATCH),
        };
        match r {
            Ok(r) => got.push(r),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Some((handles, control)) = lua
                    && control.stop_requested()
                {
                    for h in handles.iter().filter(|h| !h.is_finished()) {
                        crate::script::interrupt::interrupt(h.as_pthread_t());
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    got
}

impl Drop for Armed<'_> {
    fn drop(&mut self) {
        // Without a go, each thread's receiver closes and it ends; joined so that none
        // outlives the run that started it.
        self.go_txs.clear();
        let _ = join(std::mem::take(&mut self.handles));
    }
}
