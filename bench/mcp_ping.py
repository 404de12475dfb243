"""The MCP server of `scripts/bench.sh mcp`: the official Python SDK's own server class with one
tool that takes no arguments (peers that call every listed tool without arguments get a
success), answering in JSON, on 127.0.0.1:PORT. Both protocol eras: the stateless 2026-07-28
revision and sessions of 2025-11-25.
"""

import sys

from mcp.server.mcpserver import MCPServer

app = MCPServer("spate-bench")


@app.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]), json_response=True)
