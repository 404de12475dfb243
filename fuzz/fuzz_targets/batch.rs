//! A script's request() result split into pipelined requests, on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spate::script::check_batch(data);
});
