//! Integration tests: one binary, loopback servers started on port 0 by the tests themselves.

mod alloc;
mod cli;
mod discover;
mod engine;
mod fairness;
mod golden;
mod h2;
mod hostile;
mod install;
mod limits;
mod nginx;
mod open;
mod pki;
mod proxy;
mod redirect;
mod release;
mod route;
mod save;
mod schema;
mod secrets;
mod setup;
mod signals;
mod support;
mod tls;
mod tls_trust;
mod tmux;
