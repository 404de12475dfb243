"""An MCP server made with the official Python SDK's own server class, for tests/it/mcp.rs.

python mcp_server.py TRANSPORT PORT LOG [json]: TRANSPORT is streamable-http (or sse); each
tool call the server executes appends the tool's name to LOG, so the test can count them.
"""

import asyncio
import sys
from typing import Annotated

from pydantic import Field

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

transport, port, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
app = MCPServer("spate-test")


def executed(name: str) -> None:
    with open(log, "a") as f:
        f.write(name + "\n")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    executed("add")
    return a + b


@app.tool()
async def slow(ms: int) -> str:
    """Answer after ms milliseconds."""
    executed("slow")
    await asyncio.sleep(ms / 1000)
    return "done"


@app.tool()
def fails() -> str:
    """Always fail, as a tool that saw its failure coming."""
    executed("fails")
    raise ToolError("this tool always fails")


@app.tool()
def crashes() -> str:
    """Always raise an exception the tool did not expect."""
    executed("crashes")
    raise ValueError("this tool always crashes")


@app.tool()
async def steps(n: int, ctx: Context) -> str:
    """Report n progress notifications, then answer."""
    executed("steps")
    for i in range(n):
        await ctx.report_progress(i + 1, n)
    return "stepped"


@app.tool()
def regional(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """Answer with the region, which the client mirrors into a header."""
    executed("regional")
    return region


kw = {}
if transport == "streamable-http":
    kw = {"json_response": "json" in sys.argv[4:]}
app.run(transport, host="127.0.0.1", port=port, **kw)
