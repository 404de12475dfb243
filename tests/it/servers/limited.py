"""A server that works on at most N requests at once, each for a fixed time; more wait in a
queue. spate sweep's test target: its rate rises with the connections up to N, then stays.

usage: limited.py PORT N DELAY_MS
"""

import http.server
import sys
import threading
import time

PORT, LIMIT, DELAY = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]) / 1000
SLOTS = threading.BoundedSemaphore(LIMIT)
BODY = b"ok\n"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body are two writes: without this, Nagle holds the body for a delayed ACK.
    disable_nagle_algorithm = True

    def do_GET(self):
        with SLOTS:
            time.sleep(DELAY)
        self.send_response(200)
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *args):
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


Server(("127.0.0.1", PORT), Handler).serve_forever()
