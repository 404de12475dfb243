//! Text and data from outside: any text shown on a terminal is escaped into one inert line; any
//! value put into the k8s-job YAML reads back as itself; any `tools/list` result is read within
//! its bounds.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match first % 3 {
        0 => spate::escape::check(&text),
        1 => spate::k8s_job::check_quoted(&text),
        _ => spate::mcp::probe::check_listing(rest),
    }
});
