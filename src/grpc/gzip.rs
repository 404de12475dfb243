//! gRPC's `gzip` message encoding: a request message compressed once before a run, and an
//! answer's message decompressed for `-v`, never past gRPC's message bound (a small message
//! that inflates without end is refused, not read). Must not run per call.

use std::io::{Read, Write};

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;

use crate::proto::grpc::MAX_MESSAGE;

/// The name of the encoding in `grpc-encoding` and `grpc-accept-encoding`.
pub const NAME: &str = "gzip";

/// `message` compressed.
pub fn compress(message: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    // Writing to a Vec cannot fail.
    e.write_all(message).expect("a Vec takes every write");
    e.finish().expect("a Vec takes every write")
}

/// `compressed` inflated, within `MAX_MESSAGE` bytes.
pub fn decompress(compressed: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    GzDecoder::new(compressed)
        .take(u64::from(MAX_MESSAGE) + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("not gzip: {e}"))?;
    if out.len() > MAX_MESSAGE as usize {
        return Err(format!("inflates past the {MAX_MESSAGE} bytes spate reads"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_comes_back_and_a_bomb_or_junk_is_refused() {
        let m = b"\x0a\x01k\x12\x01v".repeat(10);
        assert_eq!(decompress(&compress(&m)).unwrap(), m);
        let bomb = compress(&vec![0; MAX_MESSAGE as usize + 1]);
        assert!(bomb.len() < 10_000, "{}", bomb.len());
        assert!(decompress(&bomb).unwrap_err().contains("inflates past"));
        assert!(
            decompress(b"\x0a\x01k")
                .unwrap_err()
                .starts_with("not gzip")
        );
    }
}
