//! Integration tests: one binary, loopback servers started on port 0 by the tests themselves.

mod alloc;
mod cli;
mod engine;
mod schema;
mod support;
