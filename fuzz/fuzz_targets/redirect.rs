//! Following a redirect on whatever a server puts in its Location (property in
//! spate::redirect::check).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spate::redirect::check(data);
});
