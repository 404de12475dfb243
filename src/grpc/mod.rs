//! gRPC: what `spate grpc` needs beside HTTP/2. `schema`: the services, methods and messages of
//! .proto files, compiled at start in Rust (no protoc), and a call's request message built from
//! JSON (proto3's JSON mapping) into bytes once. `reflection`: the same schema asked of the
//! server (its reflection service's requests and answers, sans-IO); `ask`, the one call before
//! a run that asks it; `gzip`, the messages' compression. The message framing and the call's status are `proto::grpc`'s. Must not
//! know runs: only `ask` opens a connection, once, before one.

pub mod ask;
pub mod gzip;
pub mod reflection;
pub mod schema;
