//! --alt-svc's parser of a server's Alt-Svc header: any value parses without a panic, and an
//! alternative it finds, written again as a header writes it, parses back to itself.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(alt) = spate::alt_svc::h3(text) {
        assert!(alt.port > 0);
        assert_eq!(spate::alt_svc::h3(&alt.describe()), Some(alt));
    }
});
