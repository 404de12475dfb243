//! The insight's verdict on spate itself: whether the load it generated was what was asked (CPU,
//! busy connections by Little's law, connections that did not open, the schedule, its own stalls,
//! file descriptors, local ports, busy polling), ending with one verdict that lists the limits.
//! Findings from the numbers in `Facts`; nothing measured here.

use super::finding::{Finding, Limit};
use super::insight::{BUSY_CONNECTIONS, CPU_BOUND, Facts, spate_stall};

pub(super) fn generator(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let g = f.generator;
    let c = f.connections;
    let mut limits: Vec<Limit> = Vec::new();
    if g.stopped_by_signal {
        out.push(Finding::StoppedEarly {
            elapsed_s: f.elapsed_s,
        });
    } else if f.requests.interrupted > 0 {
        out.push(Finding::InFlight {
            interrupted: f.requests.interrupted,
        });
    }
    if g.busy_poll
        && let Some(cores) = g.cores.filter(|&c| g.threads >= c)
    {
        limits.push(Limit::BusyPollAllCores {
            threads: g.threads,
            cores,
        });
    }
    match g.cpu_busy_percent {
        Some(cpu_busy) if g.busy_poll => out.push(Finding::BusyPolled { cpu_busy }),
        Some(cpu_busy) if cpu_busy >= CPU_BOUND * 100.0 => limits.push(Limit::CpuBound {
            threads: g.threads,
            cpu_busy,
        }),
        Some(cpu_busy) => out.push(Finding::CpuUse {
            threads: g.threads,
            cpu_busy,
        }),
        None => out.push(Finding::CpuUnknown),
    }
    if let Some(us_per_request) = g.script_us_per_request {
        out.push(Finding::ScriptCost {
            us_per_request,
            cpu_share: g.script_cpu_percent,
        });
    }
    if let Some(r) = g.busy_connections_ratio {
        let busy = r * 100.0;
        let streams = g.busy_streams.unwrap_or(1);
        match r < BUSY_CONNECTIONS {
            true => limits.push(Limit::IdleConnections { busy, streams }),
            false => out.push(Finding::ConnectionsLoaded { busy, streams }),
        }
    }
    if c.established < u64::from(c.requested) {
        limits.push(Limit::ConnectionsShort {
            established: c.established,
            requested: u64::from(c.requested),
            first_error: c.connect_error.clone(),
            not_open: c.not_opened.cut_off + c.not_opened.not_tried,
            setup_ms: c.setup_ms,
        });
    }
    if let Some(o) = f.open.filter(|o| o.dropped + o.missed > 0) {
        limits.push(Limit::BelowRate {
            achieved: o.rate_achieved,
            target: o.rate_target,
        });
    }
    if let Some((ms, at_s)) = spate_stall(f) {
        limits.push(Limit::Stalled { ms, at_s });
    }
    if g.fd_exhausted > 0 {
        limits.push(Limit::FileLimit {
            nofile: g.nofile_limit,
        });
    }
    super::ports::ports(f.errors, &mut limits, out);
    out.push(match limits.is_empty() {
        true => Finding::NotLimited,
        false => Finding::SpateLimited { limits },
    });
}
