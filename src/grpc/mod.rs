//! gRPC: what `spate grpc` needs beside HTTP/2. `schema`: the services, methods and messages of
//! .proto files, compiled at start in Rust (no protoc), and a call's request message built from
//! JSON (proto3's JSON mapping) into bytes once. `reflection`: the same schema asked of the
//! server (its reflection service's requests and answers). The message framing and the call's
//! status are `proto::grpc`'s. Must not open sockets or know runs.

pub mod reflection;
pub mod schema;
