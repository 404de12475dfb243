//! An MCP server's answer (a JSON body or an event stream), read however it is split.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    spate::mcp::body::check_split(rest, first & 1 == 1);
});
