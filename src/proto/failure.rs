//! Failure classes of a request attempt, the protocols' vocabulary for how one ended: a small
//! `Copy` enum that `stats` counts in an array, so that the hot path records a failure without
//! allocating. Names only: no counting here.

/// Why a request attempt did not complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Failure {
    /// No connection: connect refused, unreachable or timed out when one was needed.
    Connect,
    /// No local port was free for a new connection (EADDRNOTAVAIL): the ephemeral port range is
    /// used up, usually by closed connections waiting in TIME_WAIT when every request opens its
    /// own connection (--rpc 1, --disable-keepalive).
    Ports,
    /// The TLS handshake failed or a TLS alert ended the connection (bad certificate, name
    /// mismatch, handshake refused, client certificate required).
    Tls,
    /// No complete response within the request timeout.
    Timeout,
    /// The socket failed while reading (other than a close by the server).
    Read,
    /// The socket failed while writing (other than a close by the server).
    Write,
    /// The response violated HTTP/1.1 framing or syntax.
    Parse,
    /// The server closed or reset the connection before the response was complete.
    Closed,
    /// HTTP/2: the server reset the stream (RST_STREAM), e.g. REFUSED_STREAM or CANCEL.
    Reset,
    /// HTTP/2: any other protocol error (GOAWAY with an error, flow control, framing).
    H2,
    /// --redirect: a redirect could not be followed: more than N in a row (a loop), or a
    /// Location that is not an http(s) URL.
    Redirect,
    /// --done: a stream ended without its sentinel.
    StreamTruncated,
    /// --idle-timeout: a stream received no bytes for that long.
    StreamIdle,
    /// MCP: the tool ran and reported an error (`isError: true`), or asked for input a load
    /// test cannot give.
    ToolError,
    /// MCP: the server answered the call with a JSON-RPC error object.
    JsonRpc,
    /// MCP or gRPC: the answer broke the protocol: not JSON-RPC, another id, or no answer at
    /// all; a gRPC response without its status, with a body that is not gRPC's framing, or a
    /// unary call answered with other than one message.
    Protocol,
    /// MCP: the server no longer knows the call's session (404): a new one is opened.
    SessionExpired,
    /// HTTP/3: the QUIC connection ended with an error (a QUIC or HTTP/3 error code), or a
    /// response broke HTTP/3.
    H3,
    /// gRPC: the call ended with this status code (`grpc-status` 1 to 16, in the order gRPC
    /// numbers them; a code gRPC does not define counts as `GrpcUnknown`). (Last: a class is
    /// only ever added at the end, for the CSV's columns.)
    GrpcCancelled,
    GrpcUnknown,
    GrpcInvalidArgument,
    GrpcDeadlineExceeded,
    GrpcNotFound,
    GrpcAlreadyExists,
    GrpcPermissionDenied,
    GrpcResourceExhausted,
    GrpcFailedPrecondition,
    GrpcAborted,
    GrpcOutOfRange,
    GrpcUnimplemented,
    GrpcInternal,
    GrpcUnavailable,
    GrpcDataLoss,
    GrpcUnauthenticated,
}

impl Failure {
    pub const ALL: [Failure; 34] = [
        Failure::Connect,
        Failure::Ports,
        Failure::Tls,
        Failure::Timeout,
        Failure::Read,
        Failure::Write,
        Failure::Parse,
        Failure::Closed,
        Failure::Reset,
        Failure::H2,
        Failure::Redirect,
        Failure::StreamTruncated,
        Failure::StreamIdle,
        Failure::ToolError,
        Failure::JsonRpc,
        Failure::Protocol,
        Failure::SessionExpired,
        Failure::H3,
        Failure::GrpcCancelled,
        Failure::GrpcUnknown,
        Failure::GrpcInvalidArgument,
        Failure::GrpcDeadlineExceeded,
        Failure::GrpcNotFound,
        Failure::GrpcAlreadyExists,
        Failure::GrpcPermissionDenied,
        Failure::GrpcResourceExhausted,
        Failure::GrpcFailedPrecondition,
        Failure::GrpcAborted,
        Failure::GrpcOutOfRange,
        Failure::GrpcUnimplemented,
        Failure::GrpcInternal,
        Failure::GrpcUnavailable,
        Failure::GrpcDataLoss,
        Failure::GrpcUnauthenticated,
    ];

    /// The class of a call that ended with gRPC status `code` (not 0).
    pub fn grpc(code: u32) -> Failure {
        match code {
            1 => Failure::GrpcCancelled,
            2 => Failure::GrpcUnknown,
            3 => Failure::GrpcInvalidArgument,
            4 => Failure::GrpcDeadlineExceeded,
            5 => Failure::GrpcNotFound,
            6 => Failure::GrpcAlreadyExists,
            7 => Failure::GrpcPermissionDenied,
            8 => Failure::GrpcResourceExhausted,
            9 => Failure::GrpcFailedPrecondition,
            10 => Failure::GrpcAborted,
            11 => Failure::GrpcOutOfRange,
            12 => Failure::GrpcUnimplemented,
            13 => Failure::GrpcInternal,
            14 => Failure::GrpcUnavailable,
            15 => Failure::GrpcDataLoss,
            16 => Failure::GrpcUnauthenticated,
            _ => Failure::GrpcUnknown,
        }
    }

    /// Stable name used in the report and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Failure::Connect => "connect",
            Failure::Ports => "ports",
            Failure::Tls => "tls",
            Failure::Timeout => "timeout",
            Failure::Read => "read",
            Failure::Write => "write",
            Failure::Parse => "parse",
            Failure::Closed => "closed",
            Failure::Reset => "reset",
            Failure::H2 => "h2",
            Failure::H3 => "h3",
            Failure::Redirect => "redirect",
            Failure::StreamTruncated => "stream_truncated",
            Failure::StreamIdle => "stream_idle",
            Failure::ToolError => "tool_error",
            Failure::JsonRpc => "jsonrpc_error",
            Failure::Protocol => "protocol",
            Failure::SessionExpired => "session_expired",
            Failure::GrpcCancelled => "grpc_cancelled",
            Failure::GrpcUnknown => "grpc_unknown",
            Failure::GrpcInvalidArgument => "grpc_invalid_argument",
            Failure::GrpcDeadlineExceeded => "grpc_deadline_exceeded",
            Failure::GrpcNotFound => "grpc_not_found",
            Failure::GrpcAlreadyExists => "grpc_already_exists",
            Failure::GrpcPermissionDenied => "grpc_permission_denied",
            Failure::GrpcResourceExhausted => "grpc_resource_exhausted",
            Failure::GrpcFailedPrecondition => "grpc_failed_precondition",
            Failure::GrpcAborted => "grpc_aborted",
            Failure::GrpcOutOfRange => "grpc_out_of_range",
            Failure::GrpcUnimplemented => "grpc_unimplemented",
            Failure::GrpcInternal => "grpc_internal",
            Failure::GrpcUnavailable => "grpc_unavailable",
            Failure::GrpcDataLoss => "grpc_data_loss",
            Failure::GrpcUnauthenticated => "grpc_unauthenticated",
        }
    }

    /// The class of a failed TCP connect: running out of local ports is its own class, because
    /// its cause and its cure are on the client's machine, not the server.
    pub fn of_connect(e: &std::io::Error) -> Failure {
        if e.kind() == std::io::ErrorKind::AddrNotAvailable {
            Failure::Ports
        } else {
            Failure::Connect
        }
    }
}

/// Whether a failed connect ran out of file descriptors (EMFILE, ENFILE).
pub fn is_fd_exhaustion(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_keep_their_places_and_new_ones_come_last() {
        for (i, f) in Failure::ALL.iter().enumerate() {
            assert_eq!(*f as usize, i, "{f:?}: counts are indexed like ALL");
        }
        // The timeline CSV's columns follow this order (docs/USAGE.md): it only ever grows at
        // its end.
        let names: Vec<&str> = Failure::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(
            names,
            [
                "connect",
                "ports",
                "tls",
                "timeout",
                "read",
                "write",
                "parse",
                "closed",
                "reset",
                "h2",
                "redirect",
                "stream_truncated",
                "stream_idle",
                "tool_error",
                "jsonrpc_error",
                "protocol",
                "session_expired",
                "h3",
                "grpc_cancelled",
                "grpc_unknown",
                "grpc_invalid_argument",
                "grpc_deadline_exceeded",
                "grpc_not_found",
                "grpc_already_exists",
                "grpc_permission_denied",
                "grpc_resource_exhausted",
                "grpc_failed_precondition",
                "grpc_aborted",
                "grpc_out_of_range",
                "grpc_unimplemented",
                "grpc_internal",
                "grpc_unavailable",
                "grpc_data_loss",
                "grpc_unauthenticated",
            ]
        );
    }

    #[test]
    fn each_grpc_code_has_its_class_named_as_grpc_names_it() {
        for code in 1..=16 {
            let name = crate::proto::grpc::code_name(code).to_ascii_lowercase();
            assert_eq!(Failure::grpc(code).name(), format!("grpc_{name}"));
        }
        assert_eq!(Failure::grpc(17), Failure::GrpcUnknown);
    }

    #[test]
    fn names_are_distinct() {
        let mut names: Vec<_> = Failure::ALL.iter().map(|f| f.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Failure::ALL.len());
    }
}
