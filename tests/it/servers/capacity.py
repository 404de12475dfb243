"""A server of known capacity, for tests/it/stages.rs.

python capacity.py PORT N MS: HTTP/1.1 GETs with keep-alive on 127.0.0.1:PORT, N served at a
time, each for MS milliseconds, so at most N * 1000 / MS a second; the others wait their turn
(their connections stay open). Standard library only.
"""

import asyncio
import sys

port, at_once, ms = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])


async def serve(reader, writer, turns):
    try:
        while True:
            await reader.readuntil(b"\r\n\r\n")
            async with turns:
                await asyncio.sleep(ms / 1000)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        pass
    finally:
        writer.close()


async def main():
    turns = asyncio.Semaphore(at_once)
    server = await asyncio.start_server(
        lambda r, w: serve(r, w, turns), "127.0.0.1", port, backlog=1024
    )
    async with server:
        await server.serve_forever()


asyncio.run(main())
