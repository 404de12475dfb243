//! HOT: what runs each slot of a thread, and what accounts for it: the one loop, the thread's
//! set of tasks, and what the slots share. Must not print, or allocate per request on the
//! static path.
//!
//! - `link`: `Link<P, W>`, one slot's whole life as one hand-written future: admit, connect
//!   inside the attempt, exchange, account, back off.
//! - `attempt`: how an attempt ends, the same for every protocol (`account`).
//! - `drive`: the links a thread's set holds: the one choice of protocol and workload a slot
//!   gets, and the pre-connect.
//! - `tasks`, `task_set`: a thread's tasks as one arena, polling exactly the woken ones.
//! - `side`: the tasks beside the connections (sweeper, pacer, --busy-poll's spinner).
//! - `shared`, `record`, `slot`: what a thread's slots share (its `Setup`, its recording, each
//!   slot's cancellation and wait).

pub(super) mod attempt;
pub(super) mod drive;
pub(super) mod link;
pub(super) mod record;
pub(super) mod shared;
pub(super) mod side;
pub(super) mod slot;
pub(super) mod task_set;
pub(super) mod tasks;
