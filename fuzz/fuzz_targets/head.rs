//! The response head parser on arbitrary bytes (properties in spate::proto::h1::props).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spate::proto::h1::props::check_head(data);
});
