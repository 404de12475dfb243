//! The flags of `spate mcp`, and the MCP calls `spate compare` shares with it: parsed by clap
//! into these structs, checked and made into calls elsewhere.

use std::path::PathBuf;

use clap::Args;

use super::args::{LoadArgs, OutputArgs};

/// `spate mcp`: the server, the calls, and a run's load and output flags.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// The server's MCP endpoint, e.g. http://127.0.0.1:8000/mcp (one: to compare servers,
    /// `spate compare` with the same calls).
    #[arg(value_name = "URL")]
    pub urls: Vec<String>,

    /// Print the server's tools with their input schemas, and run nothing.
    #[arg(long = "list")]
    pub list: bool,

    #[command(flatten)]
    pub calls: McpCallArgs,

    #[command(flatten)]
    pub load: LoadArgs,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// The calls to measure and how to speak to the server: `spate mcp`'s, and `spate compare`'s
/// when its targets are MCP servers.
#[derive(Debug, Clone, Args)]
pub struct McpCallArgs {
    /// A tool to call, with its share of the calls: NAME or NAME:WEIGHT. Repeat for several.
    #[arg(long = "tool", value_name = "NAME[:WEIGHT]")]
    pub tools: Vec<String>,

    /// The arguments of a --tool or --prompt: NAME='{"a":2}' (a JSON object).
    #[arg(long = "args", value_name = "NAME=JSON")]
    pub args: Vec<String>,

    /// Calls from a JSON-lines file, one a line: {"tool": NAME, "arguments": {...},
    /// "weight": N}, or "resource": URI, or "prompt": NAME.
    #[arg(long = "args-file", value_name = "FILE")]
    pub args_file: Option<PathBuf>,

    /// A resource to read (resources/read) as a measured call. Repeat for several.
    #[arg(long = "resource", value_name = "URI")]
    pub resources: Vec<String>,

    /// A prompt to get (prompts/get) as a measured call: NAME or NAME:WEIGHT.
    #[arg(long = "prompt", value_name = "NAME[:WEIGHT]")]
    pub prompts: Vec<String>,

    /// Measure tools/list itself, with this weight among the calls (--tools-list=3).
    #[arg(long = "tools-list", value_name = "WEIGHT", num_args = 0..=1, require_equals = true,
          default_missing_value = "1")]
    pub tools_list: Option<u32>,

    /// The protocol revision: auto (the stateless 2026-07-28 if the server takes it, else a
    /// handshake), 2026-07-28, or a revision with a handshake and sessions (2025-11-25,
    /// 2025-06-18, 2025-03-26, and 2024-11-05 of the legacy HTTP+SSE transport).
    #[arg(long = "protocol-version", value_name = "VERSION", default_value = "auto",
          value_parser = ["auto", "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])]
    pub protocol_version: String,

    /// The transport: auto (Streamable HTTP, else the legacy HTTP+SSE one), streamable-http,
    /// or sse (GET an event stream at URL, POST to the endpoint it names).
    #[arg(long = "transport", value_name = "T", default_value = "auto",
          value_parser = ["auto", "streamable-http", "sse"])]
    pub transport: String,

    /// Revisions with sessions: per-connection (each connection opens one and keeps it; its
    /// HTTP/2 or HTTP/3 streams share it), shared (one for the run, opened before it), or
    /// per-request (each call opens one, on a new HTTP/1.1 connection or as streams of the
    /// slot's HTTP/2 or HTTP/3 one, and ends it after the answer).
    #[arg(long = "session", value_name = "MODE", default_value = "per-connection",
          value_parser = ["per-connection", "shared", "per-request"])]
    pub session: String,

    /// Ask for progress notifications on each call (a progressToken in its _meta); the report
    /// counts the notifications before each answer.
    #[arg(long = "progress")]
    pub progress: bool,
}

impl McpCallArgs {
    /// The flags that say how to speak to the server, where given: they mean nothing without
    /// calls.
    pub fn speaking(&self) -> Option<&'static str> {
        [
            (self.protocol_version != "auto", "--protocol-version"),
            (self.transport != "auto", "--transport"),
            (self.session != "per-connection", "--session"),
            (self.progress, "--progress"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}
