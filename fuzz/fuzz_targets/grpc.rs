//! gRPC's message framing on arbitrary bytes, whole and in splits chosen by the first 8 bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (seed, body) = data.split_at(data.len().min(8));
    let mut s = [0u8; 8];
    s[..seed.len()].copy_from_slice(seed);
    spate::proto::grpc::check_split(body, u64::from_le_bytes(s));
});
