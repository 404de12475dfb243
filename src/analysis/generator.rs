//! The insight's verdict on spate itself: whether the load it generated was what was asked (CPU,
//! busy connections by Little's law, connections that did not open, the schedule, its own stalls,
//! file descriptors, local ports, busy polling), and a last sentence that says so. Sentences from
//! the numbers in `Facts`; nothing measured here.

use super::insight::{BUSY_CONNECTIONS, CPU_BOUND, Facts, spate_stall};
use crate::numbers::{count, millis, per_second};

pub(super) fn generator(f: &Facts<'_>, out: &mut Vec<String>) {
    let g = f.generator;
    let c = f.connections;
    let mut limits: Vec<String> = Vec::new();
    if g.stopped_by_signal {
        out.push(format!(
            "The run was stopped early (Ctrl-C, SIGTERM or SIGHUP) after {}; the numbers cover that part only.",
            millis(f.elapsed_s * 1e3)
        ));
    } else if f.requests.interrupted > 0 {
        out.push(format!(
            "{} requests were still in flight when the drain after the deadline ended; they are counted as interrupted.",
            count(f.requests.interrupted)
        ));
    }
    if g.busy_poll
        && let Some(cores) = g.cores.filter(|&c| g.threads >= c)
    {
        limits.push(format!(
            "its {} busy-polling load threads (--busy-poll) spun on all {} of the machine's cores, leaving none to anything else: a server on this machine, the kernel's network work; use fewer --threads than cores, or drop --busy-poll",
            g.threads, cores
        ));
    }
    match g.cpu_busy_percent {
        Some(busy) if g.busy_poll => out.push(format!(
            "spate busy-polled (--busy-poll), so its CPU use ({busy:.0} %) does not show whether it was saturated."
        )),
        Some(busy) if busy >= CPU_BOUND * 100.0 => limits.push(if g.threads == 1 {
            format!("its load thread was busy {busy:.0} % of the time (CPU-bound); try more --threads or another machine")
        } else {
            format!(
                "its {} load threads were busy {busy:.0} % of the time (CPU-bound); try more --threads or another machine",
                g.threads
            )
        }),
        Some(busy) if g.threads == 1 => {
            out.push(format!("spate's load thread used {busy:.0} % of its CPU time."))
        }
        Some(busy) => out.push(format!(
            "spate's {} load threads used {busy:.0} % of their CPU time.",
            g.threads
        )),
        None => out.push("spate's CPU use is not known on this platform.".into()),
    }
    if let Some(r) = g.busy_connections_ratio {
        if r < BUSY_CONNECTIONS {
            limits.push(format!(
                "its connections were busy only {:.0} % of the time (mean latency x rate / connections), so spate left gaps between requests",
                r * 100.0
            ));
        } else {
            out.push(format!(
                "Connections were busy {:.1} % of the time (mean latency x rate / connections): spate kept them loaded.",
                r * 100.0
            ));
        }
    }
    if c.established < u64::from(c.requested) {
        let cut = c.not_opened.cut_off + c.not_opened.not_tried;
        let mut notes: Vec<String> = c
            .connect_error
            .iter()
            .map(|e| format!("first error: {e}"))
            .collect();
        if cut > 0 {
            notes.push(format!(
                "{} were not open when the connection phase ended after {}",
                count(cut),
                millis(c.setup_ms)
            ));
        }
        let why = match notes.is_empty() {
            true => String::new(),
            false => format!(" ({})", notes.join("; ")),
        };
        limits.push(format!(
            "only {} of {} connections could be opened{why}, so the load was lower than asked",
            count(c.established),
            count(u64::from(c.requested))
        ));
    }
    if let Some(o) = f.open.filter(|o| o.dropped + o.missed > 0) {
        limits.push(format!(
            "it sent {} of the target {} requests/s",
            per_second(o.rate_achieved),
            per_second(o.rate_target)
        ));
    }
    if let Some((ms, at)) = spate_stall(f) {
        limits.push(format!(
            "a load thread did not run for {} from {at:.1} s (the process was stopped, starved of CPU or swapped out), which delayed its requests",
            millis(ms)
        ));
    }
    if g.fd_exhausted > 0 {
        let limit = g
            .nofile_limit
            .map(|n| format!(" (ulimit -n is {n})"))
            .unwrap_or_default();
        limits.push(format!(
            "the file-descriptor limit was reached{limit}; raise it, e.g. with ulimit -n 65535"
        ));
    }
    super::ports::ports(f.errors, &mut limits, out);
    if limits.is_empty() {
        out.push("Nothing indicates that spate limited this result.".into());
    } else {
        out.push(format!(
            "This result may be limited by spate rather than by the server: {}.",
            limits.join("; ")
        ));
    }
}
