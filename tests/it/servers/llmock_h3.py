"""PyPI's llmock (an OpenAI-compatible mock, no one's here) served by hypercorn over TLS and
HTTP/3, for tests/it/stream.rs.

python llmock_h3.py PORT CERT KEY: HTTPS on 127.0.0.1:PORT over TCP and QUIC, with a 200 ms
first-token latency and 20 ms between streamed chunks, as the HTTP/1.1 test sets llmock.
"""

import asyncio
import os
import sys

port, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3]
os.environ["LLMOCK_LATENCY_MS"] = "200"
os.environ["LLMOCK_STREAM_CHUNK_DELAY_MS"] = "20"
os.environ["LLMOCK_RESPONSE_STYLE"] = "static"

from hypercorn.asyncio import serve  # noqa: E402
from hypercorn.config import Config  # noqa: E402
from llmock.main import create_app  # noqa: E402

config = Config()
config.bind = [f"127.0.0.1:{port}"]
config.quic_bind = [f"127.0.0.1:{port}"]
config.certfile, config.keyfile = cert, key
config.loglevel = "WARNING"
asyncio.run(serve(create_app(), config))
