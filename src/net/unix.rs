//! `--unix-socket`'s stream: tokio's on Unix systems; elsewhere a type with no values whose
//! connect fails with one clear error, so that the rest of `net` needs no second shape. Must
//! not be more than that.

#[cfg(unix)]
pub use tokio::net::UnixStream;

#[cfg(not(unix))]
pub use elsewhere::UnixStream;

#[cfg(not(unix))]
mod elsewhere {
    use std::io;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

    /// No Unix sockets here: nothing of this type exists.
    #[derive(Debug)]
    pub enum UnixStream {}

    impl UnixStream {
        pub async fn connect(_: impl AsRef<std::path::Path>) -> io::Result<UnixStream> {
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "--unix-socket needs a Unix system",
            ))
        }
    }

    impl AsyncRead for UnixStream {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            match *self {}
        }
    }

    impl AsyncWrite for UnixStream {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &[u8],
        ) -> Poll<io::Result<usize>> {
            match *self {}
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            match *self {}
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            match *self {}
        }
    }
}
