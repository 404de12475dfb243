//! What a shard's job reads from outside: `spate merge`'s framed results in any log (and a
//! result framed with any prefix read back whole), `--shard`'s I/N, `--start-at`'s instants, and
//! the job's `--stages` profile (written again, it reads back the same).
#![no_main]

use spate::report::frame::{RESULT_BEGIN, RESULT_END, frame, unframe};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = unframe(text);
    let _ = spate::shard::parse(text);
    let _ = spate::shard::parse_instant(text);
    spate::plan::stages::check(text);
    // A result framed under a prefix (the first line of the input) comes back whole, as long
    // as none of its lines, prefixed, holds a marker.
    let (prefix, body) = text.split_once('\n').unwrap_or(("", text));
    let marker = |s: &str| s.contains(RESULT_BEGIN) || s.contains(RESULT_END);
    if prefix.contains('\r') || body.contains('\r') || marker(prefix) || marker(body) {
        return;
    }
    let body = format!("{}\n", body.trim_end_matches('\n'));
    // A marker made by the prefix and a line together is a marker: such a log is not one.
    if body.lines().any(|l| marker(&format!("{prefix}{l}"))) {
        return;
    }
    let log: String = frame(&body)
        .lines()
        .map(|l| format!("{prefix}{l}\n"))
        .collect();
    assert_eq!(unframe(&log), [body]);
});
