"""An MCP server made with the official Python SDK's own server class, for tests/it/mcp.rs.

python mcp_server.py PORT LOG [OPTION...]: Streamable HTTP on 127.0.0.1:PORT. Each tool call
the server executes appends the tool's name to LOG, and each JSON-RPC method posted appends
"rpc METHOD", and each GET "GET PATH HTTP/VERSION", so the test can count them. `json`: answers in JSON where the SDK may;
`idle=S`: sessions idle for S seconds are forgotten (the SDK's session_idle_timeout).
`sse`: the legacy HTTP+SSE transport instead (GET /sse, then POST to the endpoint it names);
`sse-end=N`: each session's stream then ends after its N-th message event.
`refuse-stateless`: a request of the 2026-07-28 revision gets 400 with no body, as from a
server of an earlier revision. `lag=MS`: the slow tool sleeps MS milliseconds more than asked,
as a slower build of the same server would. `hypercorn`: served by hypercorn instead of
uvicorn, in one process, which speaks HTTP/1.1 and h2c with prior knowledge on the port;
`hypercorn=CERT,KEY`: over TLS with ALPN h2 and http/1.1, and HTTP/3 on the same UDP port.
`hostile-init=KIND`: over HTTP/2 and HTTP/3 only (the probe's HTTP/1.1 is left alone), the
answer to `initialize` is spoilt: `long-id` (an Mcp-Session-Id of 5,000 bytes), `bad-id` (one
with a space), `404`, or `junk` (a body that is not JSON).
"""

import asyncio
import json
import sys
from typing import Annotated

from pydantic import Field

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

port, log = int(sys.argv[1]), sys.argv[2]
options = sys.argv[3:]
lag = sum(int(o.split("=", 1)[1]) for o in options if o.startswith("lag="))
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
def echo(n: int) -> int:
    """Log the number it was given."""
    executed(f"echo {n}")
    return n


@app.tool()
async def slow(ms: int) -> str:
    """Answer after ms milliseconds."""
    executed("slow")
    await asyncio.sleep((ms + lag) / 1000)
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
async def slow_fails(ms: int) -> str:
    """Fail after ms milliseconds, as a tool that times out inside would."""
    executed("slow_fails")
    await asyncio.sleep(ms / 1000)
    raise ToolError("this tool failed slowly")


@app.tool()
def regional(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    """Answer with the region, which the client mirrors into a header."""
    executed("regional")
    return region



@app.resource("config://motd")
def motd() -> str:
    """The message of the day."""
    executed("resource motd")
    return "hello"


@app.prompt()
def greet(name: str) -> str:
    """Greet someone by name."""
    executed("prompt greet")
    return f"Hello, {name}"


def stream_ends(inner, n):
    """ASGI middleware: each session's stream ends after its n-th message event (the session
    lives on, its answers to no one)."""

    async def app(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "GET":
            return await inner(scope, receive, send)
        seen, ended = 0, False

        async def cut(message):
            nonlocal seen, ended
            if ended:
                return
            if message["type"] == "http.response.body":
                seen += message.get("body", b"").count(b"event: message")
                if seen >= n:
                    ended = True
                    message = dict(message, more_body=False)
            await send(message)

        return await inner(scope, receive, cut)

    return app


def logged(inner):
    """ASGI middleware: logs the JSON-RPC method of each POST, and each GET with the HTTP
    version it came in, then passes the request on."""

    async def app(scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "GET":
            executed(f"GET {scope['path']} HTTP/{scope.get('http_version', '?')}")
        if scope["type"] != "http" or scope["method"] != "POST":
            return await inner(scope, receive, send)
        version = dict(scope["headers"]).get(b"mcp-protocol-version", b"")
        if "refuse-stateless" in options and version == b"2026-07-28":
            executed("refused stateless")
            await send({"type": "http.response.start", "status": 400, "headers": []})
            return await send({"type": "http.response.body", "body": b""})
        chunks, more = [], True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            method = json.loads(body).get("method", "?")
        except (ValueError, AttributeError):
            method = "?"
        executed("rpc " + method)
        hostile = [o.split("=", 1)[1] for o in options if o.startswith("hostile-init=")]
        if hostile and method == "initialize" and scope.get("http_version") in ("2", "3"):
            send = spoilt(send, hostile[0])
        replayed = False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await inner(scope, replay, send)

    return app


def spoilt(send, kind):
    """`send` with the answer spoilt as `hostile-init=KIND` says."""

    async def spoiling(message):
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message["headers"] if k.lower() != b"content-length"]
            if kind in ("long-id", "bad-id"):
                value = b"x" * 5000 if kind == "long-id" else b"a b"
                headers = [(k, value if k.lower() == b"mcp-session-id" else v) for k, v in headers]
            status = 404 if kind == "404" else message["status"]
            message = {**message, "status": status, "headers": headers}
        elif message["type"] == "http.response.body" and kind == "junk":
            message = {**message, "body": b"not json" if message.get("body") else b""}
        return await send(message)

    return spoiling


idle = [float(o.split("=", 1)[1]) for o in options if o.startswith("idle=")]
kw = {"json_response": "json" in options}
if idle:
    kw["session_idle_timeout"] = idle[0]
if "sse" in options:
    # The legacy HTTP+SSE transport of 2024-11-05: GET /sse, POST /messages/?session_id=...
    served = app.sse_app()
    ends = [int(o.split("=", 1)[1]) for o in options if o.startswith("sse-end=")]
    if ends:
        served = stream_ends(served, ends[0])
else:
    served = app.streamable_http_app(**kw)
hyper = [o for o in options if o == "hypercorn" or o.startswith("hypercorn=")]
if hyper:
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.loglevel = "WARNING"
    if "=" in hyper[0]:
        config.certfile, config.keyfile = hyper[0].split("=", 1)[1].split(",")
        config.quic_bind = [f"127.0.0.1:{port}"]
    asyncio.run(serve(logged(served), config))
else:
    import uvicorn

    uvicorn.run(logged(served), host="127.0.0.1", port=port, log_level="warning")
