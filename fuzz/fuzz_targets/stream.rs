//! A whole HTTP/1.1 response stream on one connection, fed whole, byte by byte and in splits
//! chosen by the first 8 bytes: the outcome must not depend on the splits.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (seed, stream) = data.split_at(data.len().min(8));
    let mut s = [0u8; 8];
    s[..seed.len()].copy_from_slice(seed);
    spate::proto::h1::props::check_stream(stream, u64::from_le_bytes(s));
});
