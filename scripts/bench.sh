#!/usr/bin/env bash
# Side-by-side benchmark of spate against its peers, measured the arena's way
# (../shared/arena: generator pinned to CPU 0 and server to CPU 1, one thread each,
# 3 repetitions with the repetition as the outer loop, medians reported).
#
#   scripts/bench.sh                 HTTP/1.1 rows: spate + peers at c = 50, 1000, 10000
#   scripts/bench.sh instructions    user-space instructions per request under callgrind
#                                    (spate and wrk, c = 50): repeatable, unlike timings
#
# Environment: TOOLS (peers, default "wrk hey oha vastar rewrk plumbrs"), CONCS, REPS,
# DURATION (s), TARGET (hyper | nginx), LABEL, ARENA (path to the arena).
# Every run is bounded by the tool's own duration and by the arena's timeout; all load goes to
# 127.0.0.1. Results: /tmp/arena/results/$LABEL/{summary.md,results.csv,raw/}.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ARENA="${ARENA:-$ROOT/../shared/arena}"
[ -x "$ARENA/run.sh" ] || { echo "bench.sh: no arena at $ARENA (set ARENA=)" >&2; exit 2; }

(cd "$ROOT" && cargo build --release --locked -q)
SPATE="$ROOT/target/release/spate"

# Peers and target servers, installed once (idempotent).
if [ ! -x /tmp/arena/peers/bin/oha ] || ! command -v wrk >/dev/null; then
  "$ARENA/setup.sh" >&2
fi

instructions() { # BIN-runner label -> marginal user-space instructions per request
  local label=$1; shift
  local tmp; tmp=$(mktemp -d)
  "$@" "$tmp" # fills $tmp/a.{cg,n} and $tmp/b.{cg,n}: two runs of different length
  local ia ib na nb
  ia=$(awk '/^(summary|totals):/{print $2; exit}' "$tmp/a.cg"); na=$(cat "$tmp/a.n")
  ib=$(awk '/^(summary|totals):/{print $2; exit}' "$tmp/b.cg"); nb=$(cat "$tmp/b.n")
  python3 -c "print(f'$label: {($ib-$ia)/($nb-$na):.0f} instructions per request (marginal, {$na} vs {$nb} requests)')"
  rm -rf "$tmp"
}

spate_pair() { local d=$1
  for k in a:20000 b:40000; do
    valgrind -q --tool=callgrind --callgrind-out-file="$d/${k%%:*}.cg" "$SPATE" --threads 1 -c 50 \
      -n "${k#*:}" --format json http://127.0.0.1:18081/ > "$d/${k%%:*}.json"
    echo "${k#*:}" > "$d/${k%%:*}.n"
  done
}

wrk_pair() { local d=$1
  for k in a:4 b:8; do
    valgrind -q --tool=callgrind --callgrind-out-file="$d/${k%%:*}.cg" wrk -t1 -c50 -d"${k#*:}s" \
      http://127.0.0.1:18081/ > "$d/${k%%:*}.out"
    awk '/requests in/{print $1; exit}' "$d/${k%%:*}.out" > "$d/${k%%:*}.n"
  done
}

if [ "${1:-}" = instructions ]; then
  command -v valgrind >/dev/null || { echo "bench.sh: valgrind is required" >&2; exit 2; }
  # The arena's hyper target, pinned to CPU 1, for the duration of the measurement.
  [ -x /tmp/arena/server/arena-server ] || (cd "$ARENA/server" && CARGO_TARGET_DIR=/tmp/arena/build/server-target cargo build --release --locked -q && mkdir -p /tmp/arena/server && cp /tmp/arena/build/server-target/release/arena-server /tmp/arena/server/)
  taskset -c 1 /tmp/arena/server/arena-server >/dev/null 2>&1 &
  srv=$!
  trap 'kill $srv 2>/dev/null' EXIT
  sleep 0.5
  instructions spate spate_pair
  instructions wrk wrk_pair
  exit 0
fi

cd "$ARENA"
EXTRA="$SPATE" EXTRA_NAME=spate EXTRA_ADAPTER="$ROOT/scripts/arena/spate.sh" \
  TOOLS="${TOOLS-wrk hey oha vastar rewrk plumbrs}" CONCS="${CONCS:-50 1000 10000}" \
  REPS="${REPS:-3}" DURATION="${DURATION:-5}" TARGET="${TARGET:-hyper}" \
  LABEL="${LABEL:-spate-$(date +%Y%m%d-%H%M%S)}" ./run.sh
