#!/usr/bin/env bash
# The README's "Comparing servers" table, made again: four servers no one here wrote, started on
# loopback, compared by spate compare with one --targets file for the flags each needs.
#
#   nginx          Debian's nginx, `return 200 "ok\n"`, HTTP/1.1
#   nginx-h2c      the same over HTTP/2 with prior knowledge (--http2 -p 4)
#   via-tinyproxy  the first nginx through Debian's tinyproxy (--proxy)
#   python         Python's own `python3 -m http.server`, serving a 3-byte file (HTTP/1.0:
#                  a connection a request)
#
# Usage: scripts/compare-servers.sh [spate compare flags...]
#        (default: -c 16 -z 3s --warmup 500ms --rounds 5 --format markdown)
# Needs nginx, tinyproxy and python3. Everything listens on 127.0.0.1 and stops on exit.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
FLAGS=("$@")
[ ${#FLAGS[@]} -gt 0 ] || FLAGS=(-c 16 -z 3s --warmup 500ms --rounds 5 --format markdown)
for tool in nginx tinyproxy python3; do
    command -v "$tool" >/dev/null || { echo "compare-servers: $tool is not installed" >&2; exit 2; }
done
(cd "$ROOT" && cargo build --release --locked -q)
SPATE="$ROOT/target/release/spate"

DIR="$(mktemp -d /tmp/spate-compare-servers.XXXXXX)"
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$DIR"
}
trap cleanup EXIT

# A free loopback port: bind port 0 and read what the kernel gave.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() {
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.05
    done
    echo "compare-servers: nothing listens on port $1" >&2
    exit 1
}

nginx_on() { # PORT NAME LISTEN_FLAGS
    local d="$DIR/$2"
    mkdir -p "$d/tmp"
    cat >"$d/nginx.conf" <<EOF
master_process off;
daemon off;
error_log $d/error.log;
pid $d/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $d/tmp; proxy_temp_path $d/tmp; fastcgi_temp_path $d/tmp;
  uwsgi_temp_path $d/tmp; scgi_temp_path $d/tmp;
  server { listen 127.0.0.1:$1 $3; location / { return 200 "ok\n"; } }
}
EOF
    nginx -p "$d" -c "$d/nginx.conf" &
    PIDS+=($!)
}

H1=$(free_port); H2=$(free_port); PROXY=$(free_port); PY=$(free_port)
nginx_on "$H1" h1 ""
nginx_on "$H2" h2c "http2"
cat >"$DIR/tinyproxy.conf" <<EOF
Port $PROXY
Listen 127.0.0.1
Timeout 30
MaxClients 256
Allow 127.0.0.1
DisableViaHeader Yes
LogLevel Warning
LogFile "$DIR/tinyproxy.log"
PidFile "$DIR/tinyproxy.pid"
EOF
tinyproxy -d -c "$DIR/tinyproxy.conf" &
PIDS+=($!)
mkdir -p "$DIR/www" && printf 'ok\n' >"$DIR/www/index.html"
python3 -m http.server --bind 127.0.0.1 --directory "$DIR/www" "$PY" >/dev/null 2>&1 &
PIDS+=($!)
for p in "$H1" "$H2" "$PROXY" "$PY"; do wait_port "$p"; done

cat >"$DIR/servers.txt" <<EOF
# name=URL                          flags for this target alone
nginx-h2c=http://127.0.0.1:$H2/     --http2 -p 4
via-tinyproxy=http://127.0.0.1:$H1/ --proxy http://127.0.0.1:$PROXY
python=http://127.0.0.1:$PY/index.html
EOF
"$SPATE" compare "${FLAGS[@]}" "nginx=http://127.0.0.1:$H1/" --targets "$DIR/servers.txt"
