//! The words of what may have limited a run on spate's side (CPU, idle connections or
//! streams, connections that did not open, the rate, stalls, file descriptors, ports), each a
//! clause of the insight's verdict, and of how Little's law counted busy slots. Judges
//! nothing: every figure comes with the `Limit`.

use crate::analysis::Limit;
use crate::numbers::{count, millis, per_second};

/// What Little's law counted as busy, and how: the connections, or each connection's streams.
pub(super) fn busy_what(streams: u64) -> (&'static str, String) {
    match streams {
        0 | 1 => (
            "Connections",
            "mean latency x rate / connections".to_owned(),
        ),
        n => (
            "Streams",
            format!("mean latency x rate / (connections x {n} streams)"),
        ),
    }
}

/// A limit of spate's own, as the clause the insight's verdict lists it in.
pub(super) fn limit(l: &Limit) -> String {
    match l {
        Limit::BusyPollAllCores { threads, cores } => format!(
            "its {threads} busy-polling load threads (--busy-poll) spun on all {cores} of the machine's cores, leaving none to anything else: a server on this machine, the kernel's network work; use fewer --threads than cores, or drop --busy-poll"
        ),
        Limit::CpuBound {
            threads: 1,
            cpu_busy,
        } => format!(
            "its load thread was busy {cpu_busy:.0} % of the time (CPU-bound); try more --threads or another machine"
        ),
        Limit::CpuBound { threads, cpu_busy } => format!(
            "its {threads} load threads were busy {cpu_busy:.0} % of the time (CPU-bound); try more --threads or another machine"
        ),
        Limit::IdleConnections { busy, streams } => format!(
            "its {} were busy only {busy:.0} % of the time ({}), so spate left gaps between requests",
            busy_what(*streams).0.to_lowercase(),
            busy_what(*streams).1
        ),
        Limit::ConnectionsShort {
            established,
            requested,
            first_error,
            not_open,
            setup_ms,
        } => {
            let mut notes: Vec<String> = first_error
                .iter()
                .map(|e| format!("first error: {e}"))
                .collect();
            if *not_open > 0 {
                notes.push(format!(
                    "{} were not open when the connection phase ended after {}",
                    count(*not_open),
                    millis(*setup_ms)
                ));
            }
            let why = match notes.is_empty() {
                true => String::new(),
                false => format!(" ({})", notes.join("; ")),
            };
            format!(
                "only {} of {} connections could be opened{why}, so the load was lower than asked",
                count(*established),
                count(*requested)
            )
        }
        Limit::BelowRate { achieved, target } => format!(
            "it sent {} of the target {} requests/s",
            per_second(*achieved),
            per_second(*target)
        ),
        Limit::Stalled { ms, at_s } => format!(
            "a load thread did not run for {} from {at_s:.1} s (the process was stopped, starved of CPU or swapped out), which delayed its requests",
            millis(*ms)
        ),
        Limit::FileLimit { nofile } => {
            let limit = nofile
                .map(|n| format!(" (ulimit -n is {n})"))
                .unwrap_or_default();
            format!(
                "the file-descriptor limit was reached{limit}; raise it, e.g. with ulimit -n 65535"
            )
        }
        Limit::OutOfPorts => "the machine ran out of local ports for new connections".into(),
    }
}
