#!/usr/bin/env bash
# Side-by-side benchmark of spate against its peers, measured the arena's way
# (../shared/arena: generator pinned to CPU 0 and server to CPU 1, one thread each,
# 3 repetitions with the repetition as the outer loop, medians reported).
#
#   scripts/bench.sh                 HTTP/1.1 rows: spate + peers at c = 50, 1000, 10000
#   scripts/bench.sh h2              HTTP/2 rows: 16 connections x 16 streams, h2c against the
#                                    hyper target and h2 over TLS against nginx, beside h2load and oha
#   scripts/bench.sh instructions    user-space instructions per request under callgrind
#                                    (spate and wrk, c = 50): repeatable, unlike timings
#   scripts/bench.sh display         CPU us per request of spate with the live display drawn on a
#                                    terminal (a pty from script(1)), in plain mode (stderr not a
#                                    terminal) and with --no-progress; modes alternate per rep
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

start_target() { # the arena's hyper target on CPU 1, stopped when this script exits
  [ -x /tmp/arena/server/arena-server ] || (cd "$ARENA/server" && CARGO_TARGET_DIR=/tmp/arena/build/server-target cargo build --release --locked -q && mkdir -p /tmp/arena/server && cp /tmp/arena/build/server-target/release/arena-server /tmp/arena/server/)
  taskset -c 1 /tmp/arena/server/arena-server >/dev/null 2>&1 &
  srv=$!
  trap 'kill $srv 2>/dev/null' EXIT
  sleep 0.5
}

display_run() { # MODE C DUR -> CPU us per request
  local mode=$1 c=$2 d=$3 tmp; tmp=$(mktemp -d)
  local cmd="/usr/bin/time -o $tmp/time -f '%U %S' taskset -c 0 $SPATE --threads 1 -c $c -z ${d}s --format json"
  case $mode in
    tty)   script -qec "$cmd http://127.0.0.1:18081/ > $tmp/out.json" /dev/null >/dev/null ;;
    plain) eval "$cmd http://127.0.0.1:18081/" > "$tmp/out.json" 2>/dev/null ;;
    off)   eval "$cmd --no-progress http://127.0.0.1:18081/" > "$tmp/out.json" 2>/dev/null ;;
  esac
  python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
u, s = map(float, open(f"{d}/time").read().split()[-2:])
n = json.load(open(f"{d}/out.json"))["requests"]["completed"]
print(f"{(u + s) / n * 1e6:.3f}")
PY
  rm -rf "$tmp"
}

if [ "${1:-}" = display ]; then
  command -v script >/dev/null || { echo "bench.sh: script(1) is required" >&2; exit 2; }
  start_target
  for c in ${CONCS:-50 1000}; do
    declare -A got=()
    for _ in $(seq 1 "${REPS:-5}"); do
      for mode in tty plain off; do
        got[$mode]+="$(display_run "$mode" "$c" "${DURATION:-5}") "
        sleep 1
      done
    done
    for mode in tty plain off; do
      # shellcheck disable=SC2086  # the runs are separate arguments
      python3 -c "import statistics,sys; v=[float(x) for x in sys.argv[2:]]; print(f'c={$c} {sys.argv[1]:5} median {statistics.median(v):.2f} us/request  (runs: {\", \".join(f\"{x:.2f}\" for x in v)})')" "$mode" ${got[$mode]}
    done
    unset got
  done
  exit 0
fi

if [ "${1:-}" = instructions ]; then
  command -v valgrind >/dev/null || { echo "bench.sh: valgrind is required" >&2; exit 2; }
  start_target
  instructions spate spate_pair
  instructions wrk wrk_pair
  exit 0
fi

cd "$ARENA"
if [ "${1:-}" = h2 ]; then
  EXTRA="$SPATE" EXTRA_NAME=spate EXTRA_ADAPTER="$ROOT/scripts/arena/spate.sh" \
    TOOLS="${TOOLS-h2load oha}" MODES="${MODES:-h2c h2tls}" H2_SHAPES="${H2_SHAPES:-16x16}" \
    REPS="${REPS:-3}" DURATION="${DURATION:-5}" LABEL="${LABEL:-spate-h2-$(date +%Y%m%d-%H%M%S)}" ./run.sh
  exit $?
fi
EXTRA="$SPATE" EXTRA_NAME=spate EXTRA_ADAPTER="$ROOT/scripts/arena/spate.sh" \
  TOOLS="${TOOLS-wrk hey oha vastar rewrk plumbrs}" CONCS="${CONCS:-50 1000 10000}" \
  REPS="${REPS:-3}" DURATION="${DURATION:-5}" TARGET="${TARGET:-hyper}" \
  LABEL="${LABEL:-spate-$(date +%Y%m%d-%H%M%S)}" ./run.sh
