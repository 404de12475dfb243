//! spate: an HTTP load generator that must never be the bottleneck of the test it runs.

pub mod net;
pub mod plan;
pub mod proto;
pub mod request;
pub mod stats;
pub mod target;
