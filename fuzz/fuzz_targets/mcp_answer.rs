//! An MCP server's answer (a JSON body or an event stream), read however it is split; and a
//! legacy session's event stream (endpoint, notifications, the answer awaited).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    match first % 3 {
        2 => spate::mcp::inbox::check_split(rest),
        f => spate::mcp::body::check_split(rest, f == 1),
    }
});
