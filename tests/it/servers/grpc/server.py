"""A gRPC server of PyPI's grpcio, for tests/it/grpc.rs.

python server.py LOG [CERT KEY]: serves kv.v1.Store (kv.proto, compiled at start with grpc_tools)
on a port of 127.0.0.1 it writes to LOG.port once it listens (over TLS with CERT and KEY, PEM
files, when given) with server reflection, and appends a line to LOG for each call it executes:
the method, the request's key (a client stream's keys, joined by commas), the `tenant` metadata
(- without) and whether the call had a deadline (1 or 0). Without reflection when SPATE_TEST_NO_REFLECTION is set; answers compressed
with gzip when SPATE_TEST_GZIP is. Get answers NOT_FOUND ("no such key: missing") for the key
"missing" and UNAVAILABLE for "down"; Watch sends `count` items.
"""

import os
import sys
import tempfile
import threading
from concurrent import futures

import grpc
from grpc_reflection.v1alpha import reflection
from grpc_tools import protoc

here = os.path.dirname(os.path.abspath(__file__))
out = tempfile.mkdtemp(prefix="spate-grpc-")
imports = os.path.join(here, "imports")
for proto in ("common.proto", "kv.proto"):
    code = protoc.main(
        ["protoc", f"-I{here}", f"-I{imports}", f"--python_out={out}", f"--grpc_python_out={out}", proto]
    )
    if code != 0:
        sys.exit(f"protoc failed on {proto}")
sys.path.insert(0, out)
import kv_pb2  # noqa: E402
import kv_pb2_grpc  # noqa: E402

log_path = sys.argv[1]
lock = threading.Lock()
log = open(log_path, "a", buffering=1)


def note(method, request, context):
    tenant = dict(context.invocation_metadata()).get("tenant", "-")
    deadline = int(context.time_remaining() is not None)
    with lock:
        log.write(f"{method} {request.key} {tenant} {deadline}\n")


class Store(kv_pb2_grpc.StoreServicer):
    def Get(self, request, context):
        note("Get", request, context)
        if request.key == "missing":
            context.abort(grpc.StatusCode.NOT_FOUND, "no such key: missing")
        if request.key == "down":
            context.abort(grpc.StatusCode.UNAVAILABLE, "the store is down")
        return kv_pb2.Item(key=request.key, value=b"v")

    def Watch(self, request, context):
        note("Watch", request, context)
        for _ in range(request.count):
            yield kv_pb2.Item(key=request.key, value=b"v")

    def Put(self, request_iterator, context):
        keys = [item.key for item in request_iterator]
        note("Put", kv_pb2.Item(key=",".join(keys)), context)
        return kv_pb2.Count(n=len(keys))

    def Chat(self, request_iterator, context):
        items = list(request_iterator)
        note("Chat", kv_pb2.Item(key=",".join(i.key for i in items)), context)
        for item in items:
            yield item


# Without SO_REUSEPORT (grpcio's default), a port is this server's alone.
# SPATE_TEST_GZIP: answers compressed with gzip (to clients that accept it).
compression = grpc.Compression.Gzip if os.environ.get("SPATE_TEST_GZIP") else None
server = grpc.server(
    futures.ThreadPoolExecutor(max_workers=8), options=[("grpc.so_reuseport", 0)], compression=compression
)
kv_pb2_grpc.add_StoreServicer_to_server(Store(), server)
names = (kv_pb2.DESCRIPTOR.services_by_name["Store"].full_name, reflection.SERVICE_NAME)
if not os.environ.get("SPATE_TEST_NO_REFLECTION"):
    reflection.enable_server_reflection(names, server)
if len(sys.argv) > 3:
    with open(sys.argv[2], "rb") as c, open(sys.argv[3], "rb") as k:
        credentials = grpc.ssl_server_credentials([(k.read(), c.read())])
    port = server.add_secure_port("127.0.0.1:0", credentials)
else:
    port = server.add_insecure_port("127.0.0.1:0")
server.start()
with open(log_path + ".port.tmp", "w") as f:
    f.write(str(port))
os.rename(log_path + ".port.tmp", log_path + ".port")
server.wait_for_termination()
