//! A --urls-from-file request list, parsed from arbitrary text.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spate::request_list::check_list(data);
});
