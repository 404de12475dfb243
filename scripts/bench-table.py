#!/usr/bin/env python3
"""The performance targets of spate against its peers, from arena results.csv files.

Usage: scripts/bench-table.py RESULTS.csv [MORE.csv ...]
       scripts/bench-table.py --sets SET1.csv SET2.csv [...]

For every mode and connection count: the median over repetitions of throughput, CPU and user-space
CPU per request, peak RSS and p99/p50 of each tool, then spate's ratio to the best peer on each
(lower is better, except throughput). Last, the performance targets (issue 6) these runs can
judge, each met or not. Files given together are pooled as one set of runs.

With --sets, each file is a separate set (a session's run, its peers beside it) and only the
targets are printed: each set's figure, then the median over the sets, which decides met or not.
A ratio that flips between sets from the machine's drift is then judged on where it sits, not on
the last set. Needs only Python's standard library.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def med(values):
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None


def per_run(r):
    total = num(r["total"])
    user = num(r["gen_user_s"])
    p50, p99 = num(r["p50_ms"]), num(r["p99_ms"])
    return {
        "rps": num(r["rps"]),
        "cpu": num(r["cpu_us_per_req"]),
        "user": user * 1e6 / total if user is not None and total else None,
        "rss": num(r["rss_kb"]) / 1024 if num(r["rss_kb"]) else None,
        "tail": p99 / p50 if p50 and p99 else None,
    }


COLUMNS = [  # key, heading, format, better
    ("rps", "req/s", "{:,.0f}", max),
    ("cpu", "CPU us/req", "{:.2f}", min),
    ("user", "user us/req", "{:.2f}", min),
    ("rss", "RSS MiB", "{:.1f}", min),
    ("tail", "p99/p50", "{:.2f}", min),
]


# The targets these files can judge, as ratios within one run where the machine's speed matters.
# The user-space row was set as 0.5 us when wrk, the best peer, measured 0.56: 0.89x.
USER_RATIO = 0.5 / 0.56


def best_peer(table, key, better=min):
    peers = [(t, v[key]) for t, v in table.items() if t != "spate" and v[key] is not None]
    return better(peers, key=lambda tv: tv[1]) if peers else (None, None)


def verdicts(tables):
    """(target, value, shown, bound) for every target whose rows are present; the value meets the
    bound when it is at most the bound, except for throughput, where a bound of (1, max) asks for
    at least 1."""
    out = []
    for c in (50, 1000, 10000):
        t = tables.get(("h1", c, 1))
        if not t or "spate" not in t or t["spate"]["cpu"] is None:
            continue
        peer, best = best_peer(t, "cpu")
        if best:
            r = t["spate"]["cpu"] / best
            out.append((f"CPU/request at c = {c} <= 0.80x the best peer", r, f"{r:.3f}x {peer}",
                        (0.8, min)))
    t = tables.get(("h1", 50, 1))
    if t and "spate" in t and t["spate"]["user"] is not None:
        peer, best = best_peer(t, "user")
        if best:
            r = t["spate"]["user"] / best
            out.append((f"user CPU/request at c = 50 <= {USER_RATIO:.2f}x the best peer", r,
                        f"{t['spate']['user']:.2f} us, {r:.3f}x {peer}", (USER_RATIO, min)))
    t = tables.get(("h1", 10000, 1))
    if t and "spate" in t:
        if t["spate"]["rss"] is not None:
            rss = t["spate"]["rss"]
            out.append(("peak RSS at c = 10000 <= 38 MiB", rss, f"{rss:.1f} MiB", (38, min)))
        if t["spate"]["tail"] is not None:
            tail = t["spate"]["tail"]
            out.append(("p99/p50 at c = 10000 <= 1.3", tail, f"{tail:.2f}", (1.3, min)))
    t = tables.get(("h2c", 16, 16))
    if t and "spate" in t and "h2load" in t and t["h2load"]["rps"]:
        r = t["spate"]["rps"] / t["h2load"]["rps"]
        out.append(("h2c 16 x 16 req/s >= h2load's", r, f"{r:.3f}x", (1, max)))
    return out


def met(value, bound):
    limit, better = bound
    return value >= limit if better is max else value <= limit


def load(paths):
    """{(mode, conns, streams): {tool: medians over its runs}} over the runs in `paths`."""
    groups = defaultdict(list)
    for p in paths:
        with open(p) as f:
            for r in csv.DictReader(f):
                if r["rc"] not in ("0", "") and not num(r["total"]):
                    continue
                key = (r["mode"], int(r["conns"]), int(r["streams"]))
                groups[key].append((r["tool"], per_run(r)))
    tables = {}
    for key, runs in sorted(groups.items()):
        by_tool = defaultdict(list)
        for tool, m in runs:
            by_tool[tool].append(m)
        tables[key] = {
            tool: {k: med(m[k] for m in ms) for k, *_ in COLUMNS} | {"n": len(ms)}
            for tool, ms in by_tool.items()
        }
    return tables


def print_tables(tables):
    for (mode, conns, streams), table in tables.items():
        shape = f"c={conns}" + (f" x {streams} streams" if streams > 1 else "")
        print(f"\n### {mode} {shape}\n")
        print("| tool | runs | " + " | ".join(h for _, h, _, _ in COLUMNS) + " |")
        print("|---|---:|" + "---:|" * len(COLUMNS))
        for tool in sorted(table, key=lambda t: (t != "spate", table[t]["cpu"] or 1e9)):
            row = table[tool]
            cells = [f.format(row[k]) if row[k] is not None else "-" for k, _, f, _ in COLUMNS]
            print(f"| {tool} | {row['n']} | " + " | ".join(cells) + " |")
        if "spate" not in table:
            continue
        ratios = []
        for k, heading, _, better in COLUMNS:
            best_tool, best = best_peer(table, k, better)
            mine = table["spate"][k]
            if best and mine is not None:
                ratios.append(f"{heading} {mine / best:.2f}x {best_tool}")
        print("\nspate / best peer: " + "; ".join(ratios))
    judged = verdicts(tables)
    if judged:
        print("\n### Targets these runs judge (issue 6; BENCHMARK.md, *Targets*)\n")
        print("| target | measured | |\n|---|---|---|")
        for target, value, shown, bound in judged:
            print(f"| {target} | {shown} | {'met' if met(value, bound) else 'not met'} |")


def set_name(path):
    """A set's label: the directory the arena wrote its results.csv in, or the file's own name
    for a set kept under bench/results/<LABEL>.csv."""
    stem, _ = os.path.splitext(os.path.basename(path))
    if stem != "results":
        return stem
    parent = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return parent or path


def print_sets(paths):
    names = [set_name(p) for p in paths]
    per_set = [{t: (v, shown, b) for t, v, shown, b in verdicts(load([p]))} for p in paths]
    targets = list(dict.fromkeys(t for judged in per_set for t in judged))
    print("### Targets over sets (issue 6; the median over the sets decides)\n")
    print("| target | " + " | ".join(names) + " | median | met in | |")
    print("|---|" + "---|" * len(names) + "---|---|---|")
    for target in targets:
        cells, values, bound, wins = [], [], None, 0
        for judged in per_set:
            if target not in judged:
                cells.append("-")
                continue
            value, shown, bound = judged[target]
            ok = met(value, bound)
            values.append(value)
            wins += ok
            cells.append(shown + ("" if ok else " (not met)"))
        mid = statistics.median(values)
        verdict = "met" if met(mid, bound) else "not met"
        print(f"| {target} | " + " | ".join(cells)
              + f" | {mid:.3f} | {wins} of {len(values)} | {verdict} |")


if __name__ == "__main__":
    args = sys.argv[1:]
    sets = args[:1] == ["--sets"]
    if sets:
        args = args[1:]
    if not args:
        sys.exit("usage: bench-table.py RESULTS.csv [MORE.csv ...] | --sets SET.csv SET.csv ...")
    try:
        print_sets(args) if sets else print_tables(load(args))
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"bench-table.py: {e}")
