//! Wire protocols: sans-IO parsers and the per-protocol lanes that drive one connection.
//! Must not import `engine`, `report`, `ui` or `cli`: protocols know bytes and sockets, not runs.

pub mod h1;

use std::fmt;
use std::io;

use crate::stats::Failure;

/// A failed request attempt as a lane reports it: the class that is counted, and the cause that
/// becomes the class's example message (formatted only for the first of each class).
#[derive(Debug)]
pub struct Fail {
    pub class: Failure,
    pub cause: Cause,
}

#[derive(Debug)]
pub enum Cause {
    Io(io::Error),
    Parse(h1::ParseError),
    /// The server closed the connection before the response was complete.
    Eof,
}

impl Fail {
    /// A socket error while reading or writing: a close by the peer is `Closed`, others `other`.
    pub fn io(other: Failure, e: io::Error) -> Fail {
        let class = match e.kind() {
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof => Failure::Closed,
            _ => other,
        };
        Fail {
            class,
            cause: Cause::Io(e),
        }
    }

    pub fn parse(e: h1::ParseError) -> Fail {
        Fail {
            class: Failure::Parse,
            cause: Cause::Parse(e),
        }
    }

    pub fn eof() -> Fail {
        Fail {
            class: Failure::Closed,
            cause: Cause::Eof,
        }
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cause {
            Cause::Io(e) => write!(f, "{e}"),
            Cause::Parse(e) => write!(f, "{e}"),
            Cause::Eof => f.write_str("connection closed before the response was complete"),
        }
    }
}
