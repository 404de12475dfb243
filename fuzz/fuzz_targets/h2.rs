//! Server bytes on one HTTP/2 connection with four streams open, fed whole, byte by byte and in
//! splits chosen by the first 8 bytes (whose bit 1 also puts a valid handshake first): the
//! outcome must not depend on the splits, and nothing may panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (seed, stream) = data.split_at(data.len().min(8));
    let mut s = [0u8; 8];
    s[..seed.len()].copy_from_slice(seed);
    spate::proto::h2::props::check_stream(stream, u64::from_le_bytes(s));
});
