"""An HTTP/3 server on aioquic (PyPI) for tests/it/h3.rs, in one of several behaviours:

  answer     answers every request with 200 "ok"
  silent     completes the handshake, then never answers
  close      closes the connection with H3_GENERAL_PROTOCOL_ERROR at the first request
  reset      resets every request stream with H3_INTERNAL_ERROR
  reject     rejects the first 5 requests with H3_REQUEST_REJECTED, then answers
  goaway     answers 10 requests per connection, then sends GOAWAY and rejects the later ones
  nostreams  allows the client no request stream at all

Usage: h3_server.py MODE HOST PORT CERT KEY LOG. Each answered request appends a line to LOG, the
server's own count, and each connection's end appends its error code to LOG.closed (0x100,
H3_NO_ERROR, when the client closed it). It prints "ready" once it listens.
"""

import asyncio
import sys

from aioquic.asyncio import serve
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.buffer import encode_uint_var
from aioquic.h3.connection import H3_ALPN, ErrorCode, FrameType, H3Connection, encode_frame
from aioquic.h3.events import HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ProtocolNegotiated

MODE, HOST, PORT, CERT, KEY, LOG = sys.argv[1:7]
REJECT_FIRST = 5
PER_CONNECTION = 10
rejected = 0


class Server(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = None
        self.answered = 0
        self.goaway_at = None
        self.closed = False
        if MODE == "nostreams":
            limit = self._quic._local_max_streams_bidi
            limit.value = limit.sent = 0

    def datagram_received(self, data, addr):
        super().datagram_received(data, addr)
        # aioquic tells of a close only after its draining period; the frame is here at once.
        close = self._quic._close_event
        if close is not None and not self.closed:
            self.closed = True
            with open(LOG + ".closed", "a") as f:
                f.write(f"{close.error_code:#x}\n")

    def quic_event_received(self, event):
        if isinstance(event, ProtocolNegotiated):
            self.h3 = H3Connection(self._quic)
        if self.h3 is None:
            return
        for ev in self.h3.handle_event(event):
            if isinstance(ev, HeadersReceived):
                self.request(ev.stream_id)

    def answer(self, stream_id):
        self.h3.send_headers(stream_id, [(b":status", b"200"), (b"content-length", b"2")])
        self.h3.send_data(stream_id, b"ok", end_stream=True)
        self.answered += 1
        with open(LOG, "a") as f:
            f.write("1\n")

    def request(self, stream_id):
        global rejected
        if MODE == "answer":
            self.answer(stream_id)
        elif MODE == "close":
            self._quic.close(
                error_code=ErrorCode.H3_GENERAL_PROTOCOL_ERROR, reason_phrase="closing on purpose"
            )
        elif MODE == "close_poisoned":
            # A reason that would retitle the terminal and forge a line of the report.
            self._quic.close(
                error_code=ErrorCode.H3_GENERAL_PROTOCOL_ERROR,
                reason_phrase="closing\x1b]0;pwned\x07\x1b[2J\nFORGED",
            )
        elif MODE == "reset":
            self._quic.reset_stream(stream_id, ErrorCode.H3_INTERNAL_ERROR)
        elif MODE == "reject":
            if rejected < REJECT_FIRST:
                rejected += 1
                self._quic.reset_stream(stream_id, ErrorCode.H3_REQUEST_REJECTED)
            else:
                self.answer(stream_id)
        elif MODE == "goaway":
            if self.goaway_at is not None and stream_id >= self.goaway_at:
                self._quic.reset_stream(stream_id, ErrorCode.H3_REQUEST_REJECTED)
                return
            self.answer(stream_id)
            if self.answered == PER_CONNECTION and self.goaway_at is None:
                # Client-initiated bidirectional streams are 0, 4, 8, ...
                self.goaway_at = stream_id + 4
                self._quic.send_stream_data(
                    self.h3._local_control_stream_id,
                    encode_frame(FrameType.GOAWAY, encode_uint_var(self.goaway_at)),
                )


async def main():
    config = QuicConfiguration(is_client=False, alpn_protocols=H3_ALPN)
    config.load_cert_chain(CERT, KEY)
    await serve(HOST, int(PORT), configuration=config, create_protocol=Server)
    print("ready", flush=True)
    await asyncio.Future()


asyncio.run(main())
