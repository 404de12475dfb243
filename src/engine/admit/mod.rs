//! When attempts start: admission (a count, a deadline, the run's phases), the open model's
//! schedule and pacer, and the waits after failed connects. Must not touch sockets.
//!
//! - `gate`: the stop rule and `Admitted`, one attempt as the loop holds it.
//! - `pace`: the open model's intended send times, exact fractions striped over threads and
//!   shards, and the pacer that hands them out.
//! - `backoff`: the waits between failed connects, without a timer of their own.
//! - `staff`: the closed model's connections under --stages: how many of a thread's run now.

pub(super) mod backoff;
pub(super) mod gate;
pub(super) mod pace;
pub(super) mod staff;
