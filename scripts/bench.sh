#!/usr/bin/env bash
# Side-by-side benchmark of spate against its peers, measured the arena's way
# (../shared/arena: generator pinned to CPU 0 and server to CPU 1, one thread each,
# 3 repetitions with the repetition as the outer loop, medians reported).
#
#   scripts/bench.sh                 HTTP/1.1 rows: spate + peers at c = 50, 1000, 10000: req/s,
#                                    CPU and user CPU per request, peak RSS, p99/p50
#   scripts/bench.sh h2              HTTP/2 rows: 16 connections x 16 streams, h2c against the
#                                    hyper target and h2 over TLS against nginx, beside h2load and oha
#   scripts/bench.sh h3              HTTP/3 against caddy, 16 connections x 8 streams, beside oha
#                                    built with http3 (CONCS, H3_STREAMS)
#   scripts/bench.sh tls             HTTP/1.1 over TLS against nginx at c = 50, 1000, 10000,
#                                    beside wrk, oha and hey (TLS_TOOLS), alternating (REPS,
#                                    default 3; DURATION, default 10 s): requests/s and CPU per
#                                    request by nginx's own count, handshakes included; peak RSS
#   scripts/bench.sh syscalls        system calls per request (perf tracepoints) of spate, wrk and
#                                    vastar at c = 50 and 1000
#   scripts/bench.sh instructions    user-space instructions per request under callgrind
#                                    (spate and wrk, c = INSTR_C, default 50): repeatable, unlike
#                                    timings; INSTR_C=1 shows the cost of a wake-up, since each
#                                    then serves one request; SCRIPT=file.lua: both run it
#   scripts/bench.sh display         CPU us per request of spate with the live display drawn on a
#                                    terminal (a pty from script(1)), in plain mode (stderr not a
#                                    terminal) and with --no-progress; modes alternate per rep
#   scripts/bench.sh soak            one long run (SOAK, default 10m) at c = 1000: throughput per
#                                    10 s from spate's status lines; RSS, spate's CPU per request
#                                    and CPU 0's steal time sampled every 10 s; then a fresh run
#                                    (SOAK_FRESH, default 30s; 0: none) beside the last minute
#   scripts/bench.sh size            release binary size
#   scripts/bench.sh floor           the cost floor: CPU us per request of bench/floor, a client
#                                    that does no work (level- and edge-triggered epoll, io_uring),
#                                    beside spate, wrk and vastar (FLOOR_TOOLS), alternating, at
#                                    c = 50 and 1000 (REPS, default 5); then the p99/p50 a
#                                    first-come-first-served client sees at c = 10000
#   scripts/bench.sh scripts         wrk's example scripts (WRK_SCRIPTS, default post counter
#                                    pipeline) run by spate and by wrk, one thread each,
#                                    alternating (REPS, default 5) at CONCS: CPU and user us per
#                                    request; post.lua also beside its request sent from flags
#   PLUMBRS=<plumbrs with --features mcp> scripts/bench.sh mcp
#                                    an MCP server of the Python SDK (bench/mcp_ping.py) called by
#                                    spate (stateless, and with sessions) and plumbrs, one thread
#                                    each, alternating (REPS, default 5) at CONCS (default 10): CPU
#                                    and user us per successful call, and calls/s
#   GHZ=<ghz> scripts/bench.sh grpc
#                                    a grpc-go server (bench/grpc-go, built with go) called by
#                                    spate grpc and ghz, one core each, 32 calls in flight over 4
#                                    connections, alternating (REPS, default 5; DURATION, default
#                                    10 s): unary (Get) and server-streaming (Watch, 5 messages)
#                                    calls; CPU and user us per successful call, and calls/s
#   BASE=<spate binary> scripts/bench.sh compare
#                                    before and after a change: CPU and user us per request of
#                                    BASE, this build and wrk, alternating (REPS, default 5) at
#                                    CONCS (default 50 1000); not part of `all`
#   BASE_REV=<commit> scripts/bench.sh thread-instructions
#                                    the load thread's own instructions per request (callgrind,
#                                    inclusive cost of the task set's loop, marginal over 20,000
#                                    and 40,000 requests) of BASE_REV and of the working tree, both
#                                    built with symbols, at CONCS (default 50 1000) and for h2c
#                                    (-c 4 -p 8 against spate serve --h2c). Free of the report's
#                                    per-second work, which makes the whole program's marginal
#                                    count drift with the run's length; not part of `all`
#   scripts/bench.sh watch-cost      the load thread's instructions per request (as
#                                    thread-instructions counts them) of this tree without and
#                                    with --live-json and --metrics-listen, at CONCS
#   scripts/bench.sh all             every row above, then the tables (about 40 minutes)
#
# Environment: TOOLS (peers, default "wrk hey oha vastar rewrk plumbrs h2load ab"), CONCS, REPS,
# DURATION (s), TARGET (hyper | nginx), LABEL, ARENA (path to the arena), SPATE (the binary to
# measure; default target/release/spate), SOAK (duration), SOAK_FRESH (the fresh run after it),
# SERVER (soak target: hyper | spate), FLOOR_TOOLS (floor: epoll edge uring spate wrk vastar;
# ab too), SPATE_BUSY_TOO=1 (h1, h2: spate with --busy-poll beside it, as the tool spate_busy).
# Every run is bounded by the tool's own duration and by the arena's timeout; all load goes to
# 127.0.0.1. Results: /tmp/arena/results/$LABEL/{summary.md,results.csv,raw/}; tables of the
# targets: scripts/bench-table.py /tmp/arena/results/$LABEL/results.csv; over several sets, judged
# on the median: scripts/bench-table.py --sets A/results.csv B/results.csv ...
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ARENA="${ARENA:-$ROOT/../shared/arena}"
[ -x "$ARENA/run.sh" ] || { echo "bench.sh: no arena at $ARENA (set ARENA=)" >&2; exit 2; }

(cd "$ROOT" && cargo build --release --locked -q)
# SPATE=path measures another build (an older commit, a profiling build) with the same method.
SPATE="${SPATE:-$ROOT/target/release/spate}"

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

# SCRIPT=file.lua: both tools run the wrk script; LuaJIT's generated code then needs valgrind to
# watch for code written at run time.
smc() { [ -n "${SCRIPT:-}" ] && echo --smc-check=all-non-file; true; }

spate_pair() { local d=$1
  for k in a:20000 b:40000; do
    # shellcheck disable=SC2046  # smc prints one flag or nothing
    valgrind -q --tool=callgrind $(smc) --callgrind-out-file="$d/${k%%:*}.cg" "$SPATE" --threads 1 -c "${INSTR_C:-50}" \
      -n "${k#*:}" --format json ${SCRIPT:+-s "$SCRIPT"} http://127.0.0.1:18081/ > "$d/${k%%:*}.json"
    echo "${k#*:}" > "$d/${k%%:*}.n"
  done
}

wrk_pair() { local d=$1
  for k in a:4 b:8; do
    # shellcheck disable=SC2046  # smc prints one flag or nothing
    valgrind -q --tool=callgrind $(smc) --callgrind-out-file="$d/${k%%:*}.cg" wrk -t1 -c"${INSTR_C:-50}" -d"${k#*:}s" \
      ${SCRIPT:+-s "$SCRIPT"} http://127.0.0.1:18081/ > "$d/${k%%:*}.out"
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

stop_target() { kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null || true; trap - EXIT; }

served() { # requests the arena's HTTP/1.1 target has answered so far
  curl -s http://127.0.0.1:18081/__stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])'
}

display_run() { # MODE C DUR -> "cpu_us_per_req user_us_per_req"
  local mode=$1 c=$2 d=$3 tmp; tmp=$(mktemp -d)
  local cmd="/usr/bin/time -o $tmp/time -f '%U %S' taskset -c 0 $SPATE --threads 1 -c $c -z ${d}s --format json"
  case $mode in
    tty)   script -qec "$cmd http://127.0.0.1:18081/ > $tmp/out.json" /dev/null >/dev/null ;;
    plain) eval "$cmd http://127.0.0.1:18081/" > "$tmp/out.json" 2>/dev/null ;;
    off)   eval "$cmd --no-progress http://127.0.0.1:18081/" > "$tmp/out.json" 2>/dev/null ;;
    text)  eval "${cmd% --format json} --no-progress http://127.0.0.1:18081/" > "$tmp/out.txt" 2>/dev/null ;;
  esac
  python3 - "$tmp" <<'PY'
import json, os, re, sys
d = sys.argv[1]
u, s = map(float, open(f"{d}/time").read().split()[-2:])
if os.path.exists(f"{d}/out.json"):
    n = json.load(open(f"{d}/out.json"))["requests"]["completed"]
else:
    n = int(re.search(r"([0-9,]+) completed", open(f"{d}/out.txt").read())[1].replace(",", ""))
print(f"{(u + s) / n * 1e6:.3f} {u / n * 1e6:.3f}")
PY
  rm -rf "$tmp"
}

mode_display() {
  command -v script >/dev/null || { echo "bench.sh: script(1) is required" >&2; exit 2; }
  start_target
  alternate display_run "tty plain off text" 5
  stop_target
}

# Builds revision $1 (or the working tree for "tree") with symbols into /tmp/spate-sym/$2.
sym_build() {
  local rev=$1 name=$2 src=$ROOT
  if [ "$rev" != tree ]; then
    src=/tmp/spate-sym/src-$name
    rm -rf "$src"; mkdir -p "$src"
    git -C "$ROOT" archive "$rev" | tar -x -C "$src"
  fi
  (cd "$src" && CARGO_TARGET_DIR=/tmp/spate-sym/target-$name CARGO_PROFILE_RELEASE_STRIP=none \
    CARGO_PROFILE_RELEASE_DEBUG=line-tables-only cargo build --release --locked -q)
  echo "/tmp/spate-sym/target-$name/release/spate"
}

thread_count() { # BIN ARGS... -> the load thread's instructions per request, marginal
  local bin=$1 tmp n v=() ; shift; tmp=$(mktemp -d)
  for n in 20000 40000; do
    valgrind -q --tool=callgrind --callgrind-out-file="$tmp/$n.cg" "$bin" --threads 1 -n "$n" \
      --no-progress --format json "$@" > /dev/null
    v+=("$(callgrind_annotate --inclusive=yes "$tmp/$n.cg" | grep -m1 -E 'engine/(slots/)?tasks.rs:spate::engine::(slots::)?tasks::run::\{\{closure\}\}' | awk '{gsub(",", "", $1); print $1}')")
  done
  rm -rf "$tmp"
  echo $(( (v[1] - v[0]) / 20000 ))
}

mode_thread_instructions() {
  command -v valgrind >/dev/null || { echo "bench.sh: valgrind is required" >&2; exit 2; }
  [ -n "${BASE_REV:-}" ] || { echo "bench.sh thread-instructions: set BASE_REV to a commit" >&2; exit 2; }
  local old_bin new_bin c
  old_bin=$(sym_build "$BASE_REV" base); new_bin=$(sym_build tree tree)
  start_target
  for c in ${CONCS:-50 1000}; do
    echo "HTTP/1.1 c=$c: BASE $(thread_count "$old_bin" -c "$c" http://127.0.0.1:18081/)," \
      "this tree $(thread_count "$new_bin" -c "$c" http://127.0.0.1:18081/) instructions per request"
  done
  stop_target
  taskset -c 1 "$new_bin" serve --h2c --port 18082 >/dev/null 2>&1 & local h2=$!
  sleep 0.5
  echo "h2c -c 4 -p 8: BASE $(thread_count "$old_bin" --http2 -c 4 -p 8 http://127.0.0.1:18082/)," \
    "this tree $(thread_count "$new_bin" --http2 -c 4 -p 8 http://127.0.0.1:18082/) instructions per request"
  kill "$h2"
}

# What --live-json and --metrics-listen cost the load thread: its instructions per request
# (as thread-instructions counts them) of this tree without and with both.
mode_watch_cost() {
  command -v valgrind >/dev/null || { echo "bench.sh: valgrind is required" >&2; exit 2; }
  local bin c; bin=$(sym_build tree tree)
  start_target
  for c in ${CONCS:-50 1000}; do
    echo "HTTP/1.1 c=$c: without $(thread_count "$bin" -c "$c" http://127.0.0.1:18081/)," \
      "with --live-json and --metrics-listen $(thread_count "$bin" -c "$c" --live-json /dev/null \
        --metrics-listen 127.0.0.1:0 --metrics-linger 0s http://127.0.0.1:18081/) instructions per request"
  done
  stop_target
}

mode_instructions() {
  command -v valgrind >/dev/null || { echo "bench.sh: valgrind is required" >&2; exit 2; }
  start_target
  instructions spate spate_pair
  instructions wrk wrk_pair
  stop_target
}

# System calls per request, counted by the kernel's tracepoints (perf stat -e syscalls:...).
mode_syscalls() {
  command -v perf >/dev/null || { echo "bench.sh: perf (linux-perf) is required" >&2; exit 2; }
  start_target
  local url=http://127.0.0.1:18081/ c tool tmp; tmp=$(mktemp -d)
  for c in ${CONCS:-50 1000}; do
    for tool in spate wrk vastar; do
      case $tool in
        spate)  set -- "$SPATE" --threads 1 -c "$c" -z 5s --no-progress --format json "$url" ;;
        wrk)    set -- wrk -t1 -c"$c" -d5s "$url" ;;
        vastar) set -- env TOKIO_WORKER_THREADS=1 /tmp/arena/peers/bin/vastar -c "$c" -z 5s "$url" ;;
      esac
      local before; before=$(served)
      perf stat -x, -o "$tmp/perf" -e 'syscalls:sys_enter_*' -- taskset -c 0 "$@" >/dev/null 2>&1
      local after; after=$(served)
      python3 - "$tmp/perf" "$tool" "$c" "$((after - before))" <<'PY'
import sys
path, tool, c, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
calls = {}
for line in open(path):
    f = line.strip().split(",")
    if len(f) > 2 and f[2].startswith("syscalls:sys_enter_") and f[0].isdigit():
        calls[f[2].removeprefix("syscalls:sys_enter_")] = int(f[0])
per = {k: v / n for k, v in calls.items() if v / n >= 0.005}
total = sum(v for v in calls.values()) / n
print(f"c={c} {tool:7} {total:5.2f} syscalls/request: " +
      ", ".join(f"{k} {v:.2f}" for k, v in sorted(per.items(), key=lambda kv: -kv[1])))
PY
      sleep 1
    done
  done
  rm -rf "$tmp"
  stop_target
}

# One long run at c = 1000: throughput per 10 s interval from spate's own status lines (written
# every 10 s when stderr is not a terminal); every 10 s, spate's RSS and CPU time and CPU 0's
# steal time. The VM's speed drifts by +-15 % over tens of seconds, so beside the throughput
# ratio the soak reports spate's CPU per request per minute: a generator that decays spends
# more per request as the run goes on, whatever the machine does.
mode_soak() {
  local dur=${SOAK:-10m} tmp url served spid=""; tmp=$(mktemp -d)
  local serve=(taskset -c 1 "$SPATE" serve --threads 1 --port 18090)
  if [ "${SERVER:-hyper}" = spate ]; then
    # spate's own target on CPU 1; it prints what it answered when interrupted.
    "${serve[@]}" > "$tmp/serve" 2>&1 &
    spid=$!
    url=http://127.0.0.1:18090/
    sleep 0.5
  else
    start_target
    url=http://127.0.0.1:18081/
  fi
  echo "soak: spate -c 1000 -z $dur against the ${SERVER:-hyper} target (RSS, CPU every 10 s)" >&2
  date +%s.%N > "$tmp/start"
  local gen=(taskset -c 0 "$SPATE" --threads 1 -c 1000)
  "${gen[@]}" -z "$dur" --format json "$url" > "$tmp/out.json" 2> "$tmp/err" &
  local pid=$! stat
  while kill -0 "$pid" 2>/dev/null; do
    # /proc/PID/stat fields 14 and 15: user and system CPU in clock ticks; /proc/stat's cpu0
    # line, field 9: the time the hypervisor ran something else on CPU 0.
    stat=$(cut -d' ' -f14,15 "/proc/$pid/stat" 2>/dev/null) || break
    echo "$(date +%s.%N) $(ps -o rss= -p "$pid" 2>/dev/null || echo -) $stat" \
      "$(awk '$1 == "cpu0" {print $9}' /proc/stat)" >> "$tmp/samples"
    sleep 10
  done
  wait "$pid" || true
  if [ -n "$spid" ]; then
    kill -INT "$spid"; wait "$spid" || true
    served=$(sed -n 's/.*answered \([0-9]*\) requests.*/\1/p' "$tmp/serve")
    "${serve[@]}" > /dev/null 2>&1 &
    spid=$!
    sleep 0.5
  else
    served=$(served)
  fi
  # A fresh spate, the same command for SOAK_FRESH (0: none), right after: a generator that
  # decayed is slower than a fresh one, while a slower hour of the machine slows both.
  if [ "${SOAK_FRESH:-30s}" != 0 ]; then
    /usr/bin/time -o "$tmp/fresh.time" -f '%U %S' "${gen[@]}" -z "${SOAK_FRESH:-30s}" \
      --no-progress --format json "$url" > "$tmp/fresh.json" 2>/dev/null || true
  fi
  [ -z "$spid" ] || { kill "$spid"; wait "$spid" 2>/dev/null || true; }
  python3 "$ROOT/scripts/soak-report.py" "$tmp" "$served" "$(getconf CLK_TCK)"
  rm -rf "$tmp"
  [ -n "$spid" ] || stop_target
}

cpu_run() { # TOOL C DUR -> "cpu_us_per_req user_us_per_req"
  local tool=$1 c=$2 d=$3 n before tmp; tmp=$(mktemp -d)
  case $tool in
    epoll|edge|uring)
      taskset -c 0 "$FLOOR" "$tool" "$c" "$d" > "$tmp/out"
      sed -n 's/.*cpu_us_per_req=\([0-9.]*\) user_us_per_req=\([0-9.]*\).*/\1 \2/p' "$tmp/out"
      rm -rf "$tmp"; return ;;
    spate|base|static)
      # SCRIPT: both spate and wrk run it; `static` is spate sending post.lua's request from
      # flags, the static path the script must cost no more than.
      local bin=$SPATE flags=(${SCRIPT:+-s "$SCRIPT"})
      [ "$tool" = base ] && bin=$BASE
      [ "$tool" = static ] && flags=(-m POST -d 'foo=bar&baz=quux' -H 'Content-Type: application/x-www-form-urlencoded')
      /usr/bin/time -o "$tmp/time" -f '%U %S' taskset -c 0 "$bin" --threads 1 -c "$c" \
        -z "${d}s" --no-progress --format json "${flags[@]}" http://127.0.0.1:18081/ > "$tmp/out.json" 2>/dev/null
      n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"]["completed"])' "$tmp/out.json") ;;
    wrk)
      /usr/bin/time -o "$tmp/time" -f '%U %S' taskset -c 0 wrk -t1 -c"$c" -d"${d}s" \
        ${SCRIPT:+-s "$SCRIPT"} http://127.0.0.1:18081/ > "$tmp/out"
      n=$(awk '/requests in/{print $1; exit}' "$tmp/out") ;;
    vastar) # it prints no total that counts every response, so the server's count serves
      before=$(served)
      /usr/bin/time -o "$tmp/time" -f '%U %S' env TOKIO_WORKER_THREADS=1 taskset -c 0 \
        /tmp/arena/peers/bin/vastar -c "$c" -z "${d}s" -t 10 http://127.0.0.1:18081/ > /dev/null
      n=$(( $(served) - before )) ;;
    ab) # -t alone would stop at 50,000 requests; failures are not responses
      /usr/bin/time -o "$tmp/time" -f '%U %S' taskset -c 0 ab -q -k -c "$c" -t "$d" -n 20000000 \
        -s 10 http://127.0.0.1:18081/ > "$tmp/out"
      n=$(awk '/^Complete requests:/{c=$3} /^Failed requests:/{f=$3} END{print c-f}' "$tmp/out") ;;
    *) echo "bench.sh: unknown tool '$tool' (epoll edge uring spate base wrk vastar ab)" >&2
      rm -rf "$tmp"; exit 2 ;;
  esac
  python3 -c 'import sys; u, s = map(float, open(sys.argv[1]).read().split()[-2:]); n = int(sys.argv[2]); print(f"{(u + s) / n * 1e6:.2f} {u / n * 1e6:.2f}")' "$tmp/time" "$n"
  rm -rf "$tmp"
}

# RUNNER TOOLS DUR [SUMMARY] -> per c, the medians of each tool's figures, the tools alternating
# within each repetition. RUNNER TOOL C DUR prints one run's figures separated by spaces
# (by default "cpu_us user_us"); SUMMARY C TOOL RUN... prints their medians.
alternate() {
  local run=$1 tools=$2 dur=${DURATION:-$3} summary=${4:-cpu_summary} c tool
  for c in ${CONCS:-50 1000}; do
    declare -A got=()
    for _ in $(seq 1 "${REPS:-5}"); do
      for tool in $tools; do
        got[$tool]+="$("$run" "$tool" "$c" "$dur" | tr ' ' '/') "
        sleep 1
      done
    done
    for tool in $tools; do
      # shellcheck disable=SC2086  # the runs are separate arguments
      "$summary" "$c" "$tool" ${got[$tool]}
    done
    unset got
  done
}

cpu_summary() { # C TOOL RUN... (each "cpu/user") -> the medians
  python3 - "$@" <<'PY'
import statistics, sys
c, tool, runs = sys.argv[1], sys.argv[2], [tuple(map(float, r.split("/"))) for r in sys.argv[3:]]
name = {"epoll": "floor (epoll LT)", "edge": "floor (epoll ET)", "uring": "floor (io_uring)", "base": "spate (BASE)"}.get(tool, tool)
cpu = statistics.median(r[0] for r in runs)
user = statistics.median(r[1] for r in runs)
print(f"c={c} {name:16} median {cpu:.2f} us/request, user {user:.2f}  "
      f"(runs: {', '.join(f'{r[0]:.2f}' for r in runs)})")
PY
}

# The floor: what the kernel charges any client. bench/floor is a client that does no work
# in user space (fixed request, no parsing, no clock per request), through level-triggered epoll
# (as wrk), edge-triggered epoll (as spate and vastar, through tokio) and io_uring; it runs
# alternating with spate, wrk and vastar, and the medians say how far above its own interface's
# floor each tool is, and whether io_uring lowers the floor on this machine.
mode_floor() {
  cargo build --release --locked -q --manifest-path "$ROOT/bench/floor/Cargo.toml"
  FLOOR="$ROOT/bench/floor/target/release/spate-floor"
  start_target
  alternate cpu_run "${FLOOR_TOOLS:-epoll edge uring spate wrk vastar}" 4
  local tool
  # The tail a strictly first-come-first-served client sees at c = 10000 (the floor's latency
  # mode reads the clock per request), beside spate's and wrk's.
  local tc=${TAIL_CONNS:-10000} ratios="" r
  for _ in $(seq 1 "${TAIL_REPS:-3}"); do
    for tool in latency spate wrk; do
      case $tool in
        latency) r=$(taskset -c 0 "$FLOOR" latency "$tc" 5 | sed -n 's/.*p99\/p50=\([0-9.]*\).*/\1/p') ;;
        spate) r=$(taskset -c 0 "$SPATE" --threads 1 -c "$tc" -z 5s --no-progress --format json \
                 http://127.0.0.1:18081/ 2>/dev/null | python3 -c 'import json,sys; p=json.load(sys.stdin)["latency"]["percentiles"]; print("%.2f" % (p["p99"] / p["p50"]))') ;;
        wrk) r=$(taskset -c 0 wrk -t1 -c"$tc" -d5s --latency http://127.0.0.1:18081/ | python3 -c '
import re, sys
t = sys.stdin.read()
ms = lambda q: (lambda m: float(m[1]) * {"us": 1e-3, "ms": 1, "s": 1e3}[m[2]])(re.search(rf"^\s+{q}%\s+([0-9.]+)(us|ms|s)$", t, re.M))
print(f"{ms(99) / ms(50):.2f}")') ;;
      esac
      ratios+="$tool=$r "
      sleep 1
    done
  done
  # shellcheck disable=SC2086  # the runs are separate arguments
  python3 - "$tc" $ratios <<'PY'
import statistics, sys
c, runs = sys.argv[1], [a.split("=") for a in sys.argv[2:]]
for tool, name in (("latency", "floor (FIFO epoll)"), ("spate", "spate"), ("wrk", "wrk")):
    v = [float(r) for t, r in runs if t == tool and r]
    if v:
        print(f"c={c} {name:18} p99/p50 median {statistics.median(v):.2f}  (runs: {', '.join(f'{x:.2f}' for x in v)})")
PY
  stop_target
}

# HTTP/1.1 over TLS against the arena's nginx (:18443, self-signed, one worker on CPU 1), every
# tool on CPU 0 with one thread, alternating. nginx's own request counter (:18089) counts every
# tool's responses the same way, over the tool's whole wall time: the handshakes, which spate
# makes before its -z window and the peers inside theirs, are in every tool's figures.
start_nginx() {
  local prefix=/tmp/arena/nginx p
  for p in 18080 18082 18443 18089; do
    ss -Hltn "sport = :$p" | grep -q . && { echo "bench.sh: port $p already in use" >&2; exit 2; }
  done
  mkdir -p "$prefix/logs" "$prefix/tmp"
  [ -f "$prefix/cert.pem" ] || openssl req -x509 -newkey rsa:2048 -nodes -keyout "$prefix/key.pem" \
    -out "$prefix/cert.pem" -days 365 -subj /CN=localhost \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" 2>/dev/null
  taskset -c 1 nginx -p "$prefix" -c "$ARENA/nginx.conf" >/dev/null 2>&1 &
  srv=$!
  trap 'kill $srv 2>/dev/null' EXIT
  for _ in $(seq 1 50); do ss -Hltn "sport = :18443" | grep -q . && return; sleep 0.1; done
  echo "bench.sh: nginx did not start" >&2; exit 1
}

nginx_count() { curl -s -m 5 http://127.0.0.1:18089/__status | awk 'NR == 3 {print $3}'; }

tls_run() { # TOOL C DUR -> "requests/s cpu_us user_us rss_mib"; spate also says how fair it was
  local tool=$1 c=$2 d=$3 url=https://127.0.0.1:18443/ tmp before t0 n; tmp=$(mktemp -d)
  case $tool in
    spate) set -- "$SPATE" -k --http1.1 --threads 1 -c "$c" -z "${d}s" --no-progress --format json "$url" ;;
    wrk)   set -- wrk -t1 -c"$c" -d"${d}s" "$url" ;;
    oha)   set -- /tmp/arena/peers/bin/oha --no-tui --worker-threads 1 --insecure -z "${d}s" -c "$c" "$url" ;;
    hey)   set -- hey -c "$c" -z "${d}s" "$url" ;;
  esac
  before=$(nginx_count); t0=$(date +%s.%N)
  /usr/bin/time -o "$tmp/time" -f '%U %S %M' taskset -c 0 "$@" > "$tmp/out" 2>/dev/null || true
  # Each counter read is a request too.
  n=$(( $(nginx_count) - before - 1 ))
  python3 - "$tmp" "$tool" "$n" "$t0" "$(date +%s.%N)" <<'PY'
import json, sys
d, tool, n, t0, t1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
u, s, rss = map(float, open(f"{d}/time").read().split()[-3:])
print(f"{n / (t1 - t0):.0f} {(u + s) / n * 1e6:.2f} {u / n * 1e6:.2f} {rss / 1024:.1f}")
if tool == "spate":
    j = json.load(open(f"{d}/out"))
    p, f = j["latency"]["percentiles"], j["connections"]["requests_per_connection"]
    print(f"  spate's own: p99/p50 {p['p99'] / p['p50']:.2f}, requests per connection "
          f"{f['min']}-{f['max']}", file=sys.stderr)
PY
  rm -rf "$tmp"
}

tls_summary() { # C TOOL RUN... (each "requests/s/cpu/user/rss") -> the medians
  python3 - "$@" <<'PY'
import statistics, sys
c, tool, runs = sys.argv[1], sys.argv[2], [tuple(map(float, r.split("/"))) for r in sys.argv[3:]]
m = [statistics.median(r[i] for r in runs) for i in range(4)]
print(f"c={c} {tool:6} median {m[0]:9,.0f} requests/s, {m[1]:7.2f} us/request (user {m[2]:.2f}), "
      f"{m[3]:6.1f} MiB  (requests/s: {', '.join(f'{r[0]:,.0f}' for r in runs)})")
PY
}

mode_tls() {
  command -v nginx >/dev/null || { echo "bench.sh: nginx is required (the arena's setup.sh)" >&2; exit 2; }
  start_nginx
  CONCS=${CONCS:-50 1000 10000} REPS=${REPS:-3} \
    alternate tls_run "${TLS_TOOLS:-spate wrk oha hey}" 10 tls_summary
  stop_target
}

# HTTP/3 against Debian's caddy (quic-go; one worker thread, GOMAXPROCS=1, on CPU 1), every
# tool on CPU 0 with one thread, C connections x H3_STREAMS streams, alternating. caddy's access
# log counts every tool's responses the same way, over the tool's whole wall time (handshakes
# included). Debian's h2load is built without QUIC, so the peer is oha built with its http3
# feature (installed into /tmp/arena/peers-h3 once).
OHA3=/tmp/arena/peers-h3/bin/oha

start_caddy() {
  local dir=/tmp/arena/caddy p=18444
  ss -Hlun "sport = :$p" | grep -q . && { echo "bench.sh: UDP port $p already in use" >&2; exit 2; }
  mkdir -p "$dir"
  [ -f "$dir/cert.pem" ] || openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/key.pem" \
    -out "$dir/cert.pem" -days 365 -subj /CN=localhost \
    -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" 2>/dev/null
  printf '{\n admin off\n auto_https off\n skip_install_trust\n servers {\n  protocols h1 h2 h3\n }\n}\n%s {\n bind 127.0.0.1\n tls %s %s\n respond "hi!" 200\n log {\n  output file %s {\n   roll_disabled\n  }\n }\n}\n' \
    "https://127.0.0.1:$p" "$dir/cert.pem" "$dir/key.pem" "$dir/access.log" > "$dir/Caddyfile"
  : > "$dir/access.log"
  HOME=$dir XDG_DATA_HOME=$dir XDG_CONFIG_HOME=$dir GOMAXPROCS=1 taskset -c 1 \
    caddy run --adapter caddyfile --config "$dir/Caddyfile" >/dev/null 2>&1 &
  srv=$!
  trap 'kill $srv 2>/dev/null' EXIT
  for _ in $(seq 1 50); do ss -Hlun "sport = :$p" | grep -q . && return; sleep 0.1; done
  echo "bench.sh: caddy did not start" >&2; exit 1
}

# Lines logged since the last call, which empties the log (caddy then writes on at its old
# offset, after a hole of NULs that holds no newline, so the count stays exact).
caddy_count() { local log=/tmp/arena/caddy/access.log n; n=$(wc -l < "$log"); : > "$log"; echo "$n"; }

h3_run() { # TOOL C DUR -> "requests/s cpu_us user_us rss_mib"
  local tool=$1 c=$2 d=$3 p=${H3_STREAMS:-8} url=https://127.0.0.1:18444/ tmp before t0 n; tmp=$(mktemp -d)
  case $tool in
    spate) set -- "$SPATE" --http3 -k --threads 1 -c "$c" -p "$p" -z "${d}s" --no-progress --format json "$url" ;;
    oha)   set -- "$OHA3" --no-tui --worker-threads 1 --insecure --http-version 3 -p "$p" -z "${d}s" -c "$c" "$url" ;;
  esac
  caddy_count >/dev/null; t0=$(date +%s.%N)
  /usr/bin/time -o "$tmp/time" -f '%U %S %M' taskset -c 0 "$@" > "$tmp/out" 2>/dev/null || true
  n=$(caddy_count)
  python3 - "$tmp" "$n" "$t0" "$(date +%s.%N)" <<'PY'
import sys
d, n, t0, t1 = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
u, s, rss = map(float, open(f"{d}/time").read().split()[-3:])
print(f"{n / (t1 - t0):.0f} {(u + s) / n * 1e6:.2f} {u / n * 1e6:.2f} {rss / 1024:.1f}")
PY
  rm -rf "$tmp"
}

mode_h3() {
  command -v caddy >/dev/null || { echo "bench.sh: caddy is required (apt-get install caddy)" >&2; exit 2; }
  [ -x "$OHA3" ] || cargo install -q oha --version 1.16.0 --features http3 --locked --root /tmp/arena/peers-h3 >&2
  start_caddy
  CONCS=${CONCS:-16} REPS=${REPS:-5} alternate h3_run "${H3_TOOLS:-spate oha}" 5 tls_summary
  stop_target
}

# Before and after a change: BASE (another spate build) against this one, with wrk as the
# yardstick, alternating, so that the VM's drift falls on all three alike.
mode_compare() {
  [ -x "${BASE:-}" ] || { echo "bench.sh compare: set BASE to another spate binary" >&2; exit 2; }
  start_target
  alternate cpu_run "base spate wrk" 4
  stop_target
}

# wrk's example scripts run by spate and by wrk (and post.lua's request from flags, the static
# path), CPU and user CPU per request, alternating.
mode_scripts() {
  local dir=/usr/share/doc/wrk/examples/scripts name tools
  start_target
  for name in ${WRK_SCRIPTS:-post counter pipeline}; do
    tools="spate wrk"
    [ "$name" = post ] && tools="spate static wrk"
    echo "$name.lua:"
    SCRIPT=$dir/$name.lua alternate cpu_run "$tools" 4
  done
  stop_target
}

# An MCP server (bench/mcp_ping.py: the official Python SDK, one tool without arguments,
# pinned to core 1) called by spate (the stateless revision, and sessions of 2025-11-25, as
# plumbrs speaks) and by plumbrs built with its mcp feature (PLUMBRS, e.g. from
# `cargo install plumbrs --features mcp --root DIR`), one thread each on core 0, alternating. The
# server is the bottleneck, so the rates match; the figure is CPU per successful call.
mcp_run() { # TOOL C DUR -> "cpu_us_per_call user_us_per_call"
  local tool=$1 c=$2 d=$3 n tmp url=http://127.0.0.1:18090/mcp; tmp=$(mktemp -d)
  case $tool in
    spate|spate-sessions)
      local version=auto
      [ "$tool" = spate-sessions ] && version=2025-11-25
      /usr/bin/time -o "$tmp/time" -f '%U %S' taskset -c 0 "$SPATE" mcp --threads 1 -c "$c" \
        -z "${d}s" --protocol-version "$version" --no-progress --format json --tool ping "$url" \
        > "$tmp/out.json" 2>/dev/null
      n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["mcp"]["tools"][0]["succeeded"])' "$tmp/out.json") ;;
    plumbrs)
      /usr/bin/time -o "$tmp/time" -f '%U %S' taskset -c 0 "$PLUMBRS" -c "$c" -d "$d" --mcp \
        "$url" > "$tmp/out" 2>&1
      # Its summary table's "total" row starts with the responses it counted as ok.
      n=$(python3 -c 'import re,sys; print(next(re.findall(r"\d+", l)[0] for l in open(sys.argv[1]) if re.match(r"\W*total\W", l)))' "$tmp/out") ;;
    *) echo "bench.sh mcp: unknown tool '$tool' (spate spate-sessions plumbrs)" >&2
      rm -rf "$tmp"; exit 2 ;;
  esac
  python3 -c 'import sys; u, s = map(float, open(sys.argv[1]).read().split()[-2:]); n = int(sys.argv[2]); print(f"{(u + s) / n * 1e6:.2f} {u / n * 1e6:.2f} {n / float(sys.argv[3]):.0f}")' "$tmp/time" "$n" "$d"
  rm -rf "$tmp"
}

mcp_summary() { # C TOOL RUN... (each "cpu/user/rate") -> the medians
  python3 - "$@" <<'PY'
import statistics, sys
c, tool, runs = sys.argv[1], sys.argv[2], [tuple(map(float, r.split("/"))) for r in sys.argv[3:]]
m = [statistics.median(r[i] for r in runs) for i in range(3)]
print(f"c={c} {tool:15} median {m[0]:7.2f} us/call (user {m[1]:.2f}), {m[2]:5.0f} calls/s  "
      f"(us/call: {', '.join(f'{r[0]:.2f}' for r in runs)})")
PY
}

mode_mcp() {
  [ -x "${PLUMBRS:-}" ] || { echo "bench.sh mcp: set PLUMBRS to a plumbrs built with --features mcp" >&2; exit 2; }
  local python="$ROOT/target/test-venv/bin/python" server
  "$python" -c 'import mcp' 2>/dev/null || { echo "bench.sh mcp: run scripts/test-venv.sh first" >&2; exit 2; }
  taskset -c 1 "$python" "$ROOT/bench/mcp_ping.py" 18090 >/dev/null 2>&1 &
  server=$!
  sleep 3
  CONCS=${CONCS:-10} alternate mcp_run "${MCP_TOOLS:-spate spate-sessions plumbrs}" 10 mcp_summary
  kill "$server"
}

grpc_run() { # TOOL CALL DUR -> "cpu_us_per_call user_us_per_call calls_per_s"
  local tool=$1 call=$2 d=$3 n tmp data proto="$ROOT/tests/it/servers/grpc/kv.proto"
  local imports="$ROOT/tests/it/servers/grpc/imports"; tmp=$(mktemp -d)
  case $call in
    Get) data='{"key":"k"}' ;;
    Watch) data='{"key":"k","count":5}' ;;
  esac
  # 32 calls in flight over 4 connections on both sides.
  case $tool in
    spate)
      /usr/bin/time -o "$tmp/time" -f '%U %S' taskset -c 0 "$SPATE" grpc --threads 1 -c 4 -p 8 \
        -z "${d}s" --no-progress --format json --proto "$proto" -i "$imports" \
        --call "kv.v1.Store/$call" -d "$data" http://127.0.0.1:18095 > "$tmp/out.json" 2>/dev/null
      n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["requests"]["successful"])' "$tmp/out.json") ;;
    ghz)
      /usr/bin/time -o "$tmp/time" -f '%U %S' taskset -c 0 "$GHZ" --insecure -c 32 --connections 4 \
        -z "${d}s" --format json --proto "$proto" -i "$imports" --call "kv.v1.Store/$call" \
        -d "$data" 127.0.0.1:18095 > "$tmp/out.json" 2>/dev/null
      n=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["statusCodeDistribution"]["OK"])' "$tmp/out.json") ;;
    *) echo "bench.sh grpc: unknown tool '$tool' (spate ghz)" >&2
      rm -rf "$tmp"; exit 2 ;;
  esac
  python3 -c 'import sys; u, s = map(float, open(sys.argv[1]).read().split()[-2:]); n = int(sys.argv[2]); print(f"{(u + s) / n * 1e6:.2f} {u / n * 1e6:.2f} {n / float(sys.argv[3]):.0f}")' "$tmp/time" "$n" "$d"
  rm -rf "$tmp"
}

# gRPC: spate grpc and ghz against bench/grpc-go (grpc-go, pinned to core 1), unary (Get) and
# server-streaming (Watch, 5 messages a call) calls, alternating.
mode_grpc() {
  [ -x "${GHZ:-}" ] || { echo "bench.sh grpc: set GHZ to ghz (GOBIN=DIR go install github.com/bojand/ghz/cmd/ghz@latest)" >&2; exit 2; }
  (cd "$ROOT/bench/grpc-go" && go build -o "$ROOT/target/grpc-go-server" .)
  taskset -c 1 "$ROOT/target/grpc-go-server" 127.0.0.1:18095 >/dev/null 2>&1 &
  local server=$!
  sleep 1
  CONCS=${GRPC_CALLS:-Get Watch} alternate grpc_run "${GRPC_TOOLS:-spate ghz}" 10 mcp_summary
  kill "$server"
}

mode_size() {
  local bytes; bytes=$(stat -c %s "$SPATE")
  python3 -c "print(f'release binary: {$bytes / 1048576:.2f} MiB ({$bytes:,} bytes, TLS and HTTP/2 included)')"
}

mode_h2() {
  (cd "$ARENA" && EXTRA="$SPATE" EXTRA_NAME=spate EXTRA_ADAPTER="$ROOT/bench/arena/spate.sh" \
    TOOLS="${TOOLS-h2load oha}" MODES="${MODES:-h2c h2tls}" H2_SHAPES="${H2_SHAPES:-16x16}" \
    REPS="${REPS:-3}" DURATION="${DURATION:-5}" LABEL="${1:-${LABEL:-spate-h2-$(date +%Y%m%d-%H%M%S)}}" ./run.sh)
}

mode_h1() {
  (cd "$ARENA" && EXTRA="$SPATE" EXTRA_NAME=spate EXTRA_ADAPTER="$ROOT/bench/arena/spate.sh" \
    TOOLS="${TOOLS-wrk hey oha vastar rewrk plumbrs h2load ab}" CONCS="${CONCS:-50 1000 10000}" \
    REPS="${REPS:-3}" DURATION="${DURATION:-5}" TARGET="${TARGET:-hyper}" \
    LABEL="${1:-${LABEL:-spate-$(date +%Y%m%d-%H%M%S)}}" ./run.sh)
}

case "${1:-h1}" in
  h1) mode_h1 ;;
  h2) mode_h2 ;;
  syscalls) mode_syscalls ;;
  instructions) mode_instructions ;;
  display) mode_display ;;
  soak) mode_soak ;;
  size) mode_size ;;
  floor) mode_floor ;;
  compare) mode_compare ;;
  thread-instructions) mode_thread_instructions ;;
  watch-cost) mode_watch_cost ;;
  scripts) mode_scripts ;;
  mcp) mode_mcp ;;
  grpc) mode_grpc ;;
  tls) mode_tls ;;
  h3) mode_h3 ;;
  all)
    label=${LABEL:-spate-all-$(date +%Y%m%d-%H%M%S)}
    mode_size
    mode_h1 "$label-h1"
    TOOLS="h2load oha" mode_h2 "$label-h2"
    mode_syscalls
    mode_floor
    mode_display
    mode_soak
    python3 "$ROOT/scripts/bench-table.py" "/tmp/arena/results/$label-h1/results.csv" \
      "/tmp/arena/results/$label-h2/results.csv"
    ;;
  *) echo "bench.sh: unknown mode '$1' (h1 h2 h3 tls scripts mcp grpc syscalls instructions thread-instructions watch-cost display soak size floor compare all)" >&2; exit 2 ;;
esac
