# shellcheck shell=bash disable=SC2034,SC2153,SC2154  # sourced by the arena runner, which owns these globals
# Arena adapter for spate (see ../shared/arena/adapters/README.adapters.md).
# One load thread (--threads 1), duration mode, results read from spate's own JSON.
# h2c: HTTP/2 prior knowledge with C connections x M streams; h2tls: ALPN h2 over TLS (the
# arena's self-signed certificate, hence --insecure).
spate_version() { "$BIN" --version | awk '{print $2}'; }
spate_cmd() { local mode=$1 url=$2 c=$3 d=$4 m=$5
  ENVV=()
  local base=("$BIN" --threads 1 -c "$c" -z "${d}s" -t 10s --format json)
  case $mode in
    h1)    CMD=("${base[@]}" "$url") ;;
    h2c)   CMD=("${base[@]}" --http2 -p "$m" "$url") ;;
    h2tls) CMD=("${base[@]}" --http2 -p "$m" --insecure "$url") ;;
    *) return 2 ;;
  esac
}
spate_parse() {
  python3 - "$2" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception:
    print(); sys.exit(0)
r, l, t = j["requests"], j["latency"], j["totals"]
f = lambda x: "NA" if x is None else f"{x:.4f}"
ok = sum(s["count"] for s in j["status_codes"] if 200 <= s["code"] < 300)
print(f"rps={t['requests_per_sec']:.2f} total={ok} p50_ms={f(l['percentiles']['p50'])} "
      f"p99_ms={f(l['percentiles']['p99'])} mean_ms={f(l['mean_ms'])} errors={r['failed'] + r['completed'] - ok}")
PY
}

# spate_busy: the same with --busy-poll (load threads poll instead of sleeping). Run it as
# EXTRA_NAME=spate_busy, or beside plain spate in the same run with SPATE_BUSY_TOO=1 (the
# adapter then registers it with the runner's tool list as it is sourced).
spate_busy_version() { spate_version; }
spate_busy_cmd() { spate_cmd "$@" || return; CMD+=(--busy-poll); }
spate_busy_parse() { spate_parse "$@"; }
if [ -n "${SPATE_BUSY_TOO:-}" ] && declare -p TOOL_LIST >/dev/null 2>&1 && [ -n "${EXTRA:-}" ]; then
  BINS[spate_busy]=$EXTRA
  TOOL_LIST+=(spate_busy)
fi
