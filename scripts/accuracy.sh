#!/usr/bin/env bash
# shellcheck disable=SC2317  # the scenario_N functions are called indirectly
# Measurement accuracy of spate against known truths. Each scenario prints its figures and a
# PASS or FAIL line; the exit status is 1 if any check failed.
#
#   1  Known delay (arena, 5 ms, c = 10): each tool's p50 minus the server-observed p50 for
#      spate, spate --busy-poll, wrk and vastar, from the same run (REPS repetitions).
#      Target: spate at most 60 us.
#   2  Open model, a 1 s server stall in a 20 s run at 500 requests/s (far below capacity):
#      p96..p99.5 against the analytic d + S (q - (1 - f)) / f, f = S / T; within 5 %.
#   3  The same stall in the closed model (c = 10): the report says closed model and the
#      insight says that coordinated omission hides the stall.
#   4  spate itself stopped for 1 s (SIGSTOP, SIGCONT) in an open-model run: latency max and
#      send lag max are at least the 1 s it was stopped.
#   5  Rate accuracy: -q R for 10 s at R = 1k, 10k, 50k: achieved rate within 0.5 % of R, send
#      lag p99 under 1 ms (median of REPS).
#   6  Counts: -n N; the server answers exactly N, closed and open model, HTTP/1.1 and h2c,
#      and with --rpc.
#
# Usage: scripts/accuracy.sh [SCENARIO...]     (default: 1 2 3 4 5 6)
# Environment: REPS (default 3), OUT (results directory), ARENA (path to the arena, for 1).
# Load goes to 127.0.0.1 only; every run is bounded by its own -z/-n and by timeout(1).
# spate runs on CPU 0 and its target on CPU 1 (when the machine has two).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ARENA="${ARENA:-$ROOT/../shared/arena}"
REPS="${REPS:-3}"
OUT="${OUT:-/tmp/spate-accuracy/$(date +%Y%m%d-%H%M%S)}"
SCENARIOS=("$@")
[ ${#SCENARIOS[@]} -gt 0 ] || SCENARIOS=(1 2 3 4 5 6)
mkdir -p "$OUT"

(cd "$ROOT" && cargo build --release --locked -q)
SPATE="$ROOT/target/release/spate"
HDR="$ROOT/scripts/hdr.py"
GEN=(); SRV=()
if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then GEN=(taskset -c 0); SRV=(taskset -c 1); fi

FAILED=0
say() { echo "$*" | tee -a "$OUT/results.md"; }
check() { # CONDITION-EXIT-STATUS DESCRIPTION
  if [ "$1" -eq 0 ]; then say "PASS: $2"; else say "FAIL: $2"; FAILED=1; fi
}
json() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

SRV_PID=""
serve() { # ARGS... -> URL; the server's stdout in $OUT/serve.out
  "${SRV[@]}" "$SPATE" serve -p 0 "$@" > "$OUT/serve.out" &
  SRV_PID=$!
  for _ in $(seq 1 100); do grep -q listening "$OUT/serve.out" 2>/dev/null && break; sleep 0.05; done
  URL=$(awk '/listening/{print $NF; exit}' "$OUT/serve.out")
  [ -n "$URL" ] || { echo "accuracy.sh: spate serve did not start" >&2; exit 2; }
}
stop_serve() { # stops the server; SERVED = how many requests it answered
  kill -TERM "$SRV_PID"; wait "$SRV_PID" || true; SRV_PID=""
  SERVED=$(awk '/answered/{print $4}' "$OUT/serve.out")
}
trap '[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; true' EXIT

load() { # NAME ARGS... -> $OUT/NAME.json (bounded by timeout)
  local name=$1; shift
  timeout 120 "${GEN[@]}" "$SPATE" --no-progress --format json "$@" > "$OUT/$name.json"
}

median() { python3 -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }

scenario_1() {
  say "## 1. Known delay: 5 ms, c = 10 (arena latency run, $REPS repetitions)"
  [ -x "$ARENA/run.sh" ] || { say "FAIL: no arena at $ARENA (set ARENA=)"; FAILED=1; return; }
  if [ ! -x /tmp/arena/peers/bin/vastar ] || ! command -v wrk >/dev/null; then "$ARENA/setup.sh" >&2; fi
  local label; label="accuracy-lat-$(date +%Y%m%d-%H%M%S)"
  (cd "$ARENA" && TOOLS="wrk vastar" EXTRA="$SPATE" EXTRA_NAME=spate \
    EXTRA_ADAPTER="$ROOT/bench/arena/spate.sh" SPATE_BUSY_TOO=1 MODES=lat REPS="$REPS" \
    LABEL="$label" ./run.sh > "$OUT/arena.log" 2>&1)
  local csv=/tmp/arena/results/$label/results.csv
  python3 - "$csv" <<'PY' | tee -a "$OUT/results.md"
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["mode"] == "lat"]
print("| tool | p50 ms | server p50 ms | p50 - server p50 (us), median | per repetition |")
print("|---|---|---|---|---|")
for tool in dict.fromkeys(r["tool"] for r in rows):
    mine = [r for r in rows if r["tool"] == tool and r["p50_ms"] not in ("", "NA")]
    d = [(float(r["p50_ms"]) - float(r["srv_p50_ms"])) * 1e3 for r in mine]
    print(f"| {tool} | {statistics.median(float(r['p50_ms']) for r in mine):.3f} | "
          f"{statistics.median(float(r['srv_p50_ms']) for r in mine):.3f} | "
          f"{statistics.median(d):.0f} | {' '.join(f'{x:.0f}' for x in d)} |")
PY
  local spate_us busy_us
  spate_us=$(python3 - "$csv" spate <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["tool"] == sys.argv[2]]
print(f"{statistics.median((float(r['p50_ms']) - float(r['srv_p50_ms'])) * 1e3 for r in rows):.0f}")
PY
)
  busy_us=$(python3 - "$csv" spate_busy <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["tool"] == sys.argv[2]]
print(f"{statistics.median((float(r['p50_ms']) - float(r['srv_p50_ms'])) * 1e3 for r in rows):.0f}")
PY
)
  check "$([ "$busy_us" -le 60 ] && echo 0 || echo 1)" "spate --busy-poll p50 - server p50 = $busy_us us (target <= 60 us)"
  say "(spate without --busy-poll: $spate_us us; arena results: /tmp/arena/results/$label)"
}

stall_server() { serve --delay 5ms --stall-every 12s --stall-for 1s; }

scenario_2() {
  say "## 2. Open model: a 1 s server stall in a 20 s run at 500 requests/s ($REPS repetitions)"
  local errs=()
  for rep in $(seq 1 "$REPS"); do
    stall_server
    load "stall-open-$rep" -q 500 -c 600 -z 20s "$URL"
    stop_serve
    local worst
    python3 - "$OUT/stall-open-$rep.json" "$HDR" > "$OUT/stall-open-$rep.md" <<'PY'
import json, sys, importlib.util
spec = importlib.util.spec_from_file_location("hdr", sys.argv[2]); hdr = importlib.util.module_from_spec(spec); spec.loader.exec_module(hdr)
j = json.load(open(sys.argv[1]))
d, S, T = 0.005, 1.0, 20.0
f = S / T
qs = [0.96, 0.97, 0.98, 0.99, 0.995]
got = hdr.quantiles(j["latency"]["hdr_base64"], qs, unit=1e9)
assert abs(hdr.quantiles(j["latency"]["hdr_base64"], [0.99])[0] - j["latency"]["percentiles"]["p99"]) < 1e-3
worst = 0.0
print("| q | measured s | analytic s | error |")
print("|---|---|---|---|")
for q, g in zip(qs, got):
    e = d + S * (q - (1 - f)) / f
    worst = max(worst, abs(g - e) / e)
    print(f"| {q} | {g:.4f} | {e:.4f} | {100 * (g - e) / e:+.1f} % |")
print(f"worst error: {100 * worst:.2f} %")
PY
    tee -a "$OUT/results.md" < "$OUT/stall-open-$rep.md"
    worst=$(awk '/^worst error/{print $3}' "$OUT/stall-open-$rep.md")
    errs+=("$worst")
  done
  local med; med=$(median "${errs[@]}")
  check "$(python3 -c "print(0 if $med <= 5 else 1)")" "open-model stall: worst quantile error, median of $REPS = $med % (per repetition: ${errs[*]}) (<= 5 %)"
}

scenario_3() {
  say "## 3. The same stall in the closed model (c = 10)"
  stall_server
  load stall-closed -c 10 -z 20s "$URL"
  stop_serve
  local model p99 gap
  model=$(json "$OUT/stall-closed.json" 'j["config"]["model"]')
  p99=$(json "$OUT/stall-closed.json" 'j["latency"]["percentiles"]["p99"]')
  gap=$(json "$OUT/stall-closed.json" 'j["totals"]["longest_gap_ms"]')
  say "model: $model; latency p99 $p99 ms; longest completion gap $gap ms"
  json "$OUT/stall-closed.json" '"\n".join("insight: " + l for l in j["insight"] if "stall" in l)' | tee -a "$OUT/results.md"
  check "$([ "$model" = closed ] && echo 0 || echo 1)" "the report labels the run closed model"
  check "$(json "$OUT/stall-closed.json" '0 if any("coordinated omission" in l and "stalled" in l for l in j["insight"]) else 1')" \
    "the insight says the stall is hidden by coordinated omission"
}

scenario_4() {
  say "## 4. spate stopped for 1 s (SIGSTOP/SIGCONT) at 1,000 requests/s"
  serve --delay 1ms
  "${GEN[@]}" "$SPATE" --no-progress --format json -q 1000 -c 50 -z 6s "$URL" > "$OUT/sigstop.json" &
  local pid=$!
  sleep 2.5; kill -STOP "$pid"; sleep 1; kill -CONT "$pid"
  wait "$pid"
  stop_serve
  local lat lag
  lat=$(json "$OUT/sigstop.json" 'j["latency"]["max_ms"]')
  lag=$(json "$OUT/sigstop.json" 'j["open_model"]["send_lag"]["max_ms"]')
  say "latency max $lat ms, send lag max $lag ms, latency p99 $(json "$OUT/sigstop.json" 'j["latency"]["percentiles"]["p99"]') ms"
  say "spate's own stall as measured: $(json "$OUT/sigstop.json" 'j["generator"]["longest_stall_ms"]') ms"
  json "$OUT/sigstop.json" '"\n".join("insight: " + l for l in j["insight"] if "did not run" in l)' | tee -a "$OUT/results.md"
  local own; own=$(json "$OUT/sigstop.json" 'j["generator"]["longest_stall_ms"]')
  check "$(python3 -c "print(0 if $lat >= 950 and $lag >= 950 and $own >= 850 else 1)")" \
    "the stop shows in latency and send lag (both >= 0.95 s) and as spate's own stall (>= 0.85 s)"
  check "$(json "$OUT/sigstop.json" '0 if any("server is not to blame" in l for l in j["insight"]) else 1')" \
    "the insight puts the stall on spate, not on the server"
}

scenario_5() {
  say "## 5. Rate accuracy: 10 s at a fixed rate, c = 50 ($REPS repetitions)"
  say "| rate | achieved (median) | error | send lag p99 ms (median) | sent = server count |"
  say "|---|---|---|---|---|"
  local all=0
  for r in 1000 10000 50000; do
    local ach=() lag=() same=yes
    for rep in $(seq 1 "$REPS"); do
      serve
      load "rate-$r-$rep" -q "$r" -c 50 -z 10s "$URL"
      stop_serve; local n=$SERVED
      ach+=("$(json "$OUT/rate-$r-$rep.json" 'j["open_model"]["rate_achieved"]')")
      lag+=("$(json "$OUT/rate-$r-$rep.json" 'j["open_model"]["send_lag"]["p99_ms"]')")
      [ "$n" = "$(json "$OUT/rate-$r-$rep.json" 'j["open_model"]["sent"]')" ] || same=no
    done
    local a l e
    a=$(median "${ach[@]}"); l=$(median "${lag[@]}")
    a=$(printf '%.2f' "$a"); l=$(printf '%.3f' "$l")
    e=$(python3 -c "print(f'{100 * ($a - $r) / $r:+.3f} %')")
    say "| $r | $a | $e | $l | $same |"
    python3 -c "import sys; sys.exit(0 if abs($a - $r) / $r <= 0.005 and $l < 1 else 1)" || all=1
    [ "$same" = yes ] || all=1
  done
  check "$all" "achieved rate within 0.5 %, send lag p99 under 1 ms, every sent request answered"
}

scenario_6() {
  say "## 6. Counts: -n N, server-side"
  local all=0
  count_case() { # LABEL N SERVE-ARGS -- LOAD-ARGS
    local label=$1 n=$2; shift 2
    local sargs=()
    while [ "$1" != -- ]; do sargs+=("$1"); shift; done; shift
    serve "${sargs[@]}"
    load "count-$label" -n "$n" "$@" "$URL"
    local got ok warm
    stop_serve; got=$SERVED
    ok=$(json "$OUT/count-$label.json" 'j["requests"]["completed"]')
    warm=$(json "$OUT/count-$label.json" 'j["config"]["warmup_requests"]')
    say "$label: -n $n, spate completed $ok (+ $warm warm-up), server answered $got"
    [ "$got" = $((n + warm)) ] && [ "$ok" = "$n" ] || all=1
  }
  count_case "closed-h1" 100000 -- -c 50
  count_case "closed-h2c" 100000 --h2c -- -c 4 --http2 -p 16
  count_case "open-h1" 20000 -- -c 50 -q 20000
  count_case "open-h2c" 20000 --h2c -- -c 4 --http2 -p 16 -q 20000
  count_case "closed-rpc7" 10001 -- -c 16 --rpc 7
  count_case "closed-warmup" 20000 -- -c 16 --warmup 1s
  check "$all" "every count exact: the server answered N plus the warm-up's requests, spate recorded N"
}

for s in "${SCENARIOS[@]}"; do
  case $s in
    1|2|3|4|5|6) "scenario_$s"; echo | tee -a "$OUT/results.md" ;;
    *) echo "accuracy.sh: unknown scenario $s (1-6)" >&2; exit 2 ;;
  esac
done
echo "results: $OUT/results.md"
exit "$FAILED"
