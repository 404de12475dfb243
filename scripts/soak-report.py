#!/usr/bin/env python3
"""The soak's figures, from what `scripts/bench.sh soak` collected in DIR: spate's JSON result
(out.json), its status lines (err: "spate: 10.0s of 10m: 812,345 completed ..."), and one sample
every 10 s (samples: epoch seconds, RSS KiB, user and system CPU ticks, CPU 0 steal ticks);
and, if present, a fresh run of the same command right after (fresh.json, fresh.time: user and
system seconds).

Usage: soak-report.py DIR SERVED CLK_TCK

Prints the requests against the server's count, the rate per 10 s, the first and the last
minute's throughput, spate's CPU per request and CPU 0's steal in the same minutes, RSS, and
the last minute against the fresh run.
"""
import json
import os
import re
import sys
from bisect import bisect_left


def interpolate(points, t):
    """The value at time t of a piecewise-linear series [(time, value)], clamped at its ends."""
    times = [p[0] for p in points]
    i = bisect_left(times, t)
    if i == 0:
        return points[0][1]
    if i == len(points):
        return points[-1][1]
    (t0, v0), (t1, v1) = points[i - 1], points[i]
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0) if t1 > t0 else v1


def mean(v):
    return sum(v) / len(v)


def main():
    d, served, tck = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    result = json.load(open(f"{d}/out.json"))
    start = float(open(f"{d}/start").read())

    # Completed requests at each status line, seconds since spate's start.
    done = [(0.0, 0)]
    for line in open(f"{d}/err"):
        m = re.match(r"spate: ([0-9.]+)s of [^:]+: ([0-9,]+) completed", line)
        if m:
            done.append((float(m[1]), int(m[2].replace(",", ""))))
    rates = [(t1, (n1 - n0) / (t1 - t0)) for (t0, n0), (t1, n1) in zip(done, done[1:])]
    end = done[-1][0]
    first = [r for t, r in rates if t <= 60]
    last = [r for t, r in rates if t > end - 60]

    rss, cpu, steal = [], [], []
    for line in open(f"{d}/samples"):
        f = line.split()
        if len(f) != 5:
            continue
        t = float(f[0]) - start
        if f[1] != "-":
            rss.append(int(f[1]))
        cpu.append((t, (int(f[2]) + int(f[3])) / tck))
        steal.append((t, int(f[4]) / tck))

    def per_request_us(t0, t1):
        n = interpolate(done, t1) - interpolate(done, t0)
        return (interpolate(cpu, t1) - interpolate(cpu, t0)) / n * 1e6 if n > 0 else float("nan")

    def steal_percent(t0, t1):
        return (interpolate(steal, t1) - interpolate(steal, t0)) / (t1 - t0) * 100

    print(f"requests: {result['requests']['completed']:,} completed, "
          f"{result['requests']['failed']:,} failed; the server counted {served:,}")
    print("req/s per 10 s: " + " ".join(f"{r / 1000:.0f}k" for _, r in rates))
    print(f"throughput: first minute {mean(first):,.0f} req/s, last minute {mean(last):,.0f} req/s "
          f"({mean(last) / mean(first) * 100:.1f} %)")
    last_cpu = None
    if len(cpu) >= 2:
        # The last sample can precede the last status line by up to 10 s: end the window there.
        t1 = min(end, cpu[-1][0])
        a, last_cpu = per_request_us(0, 60), per_request_us(t1 - 60, t1)
        print(f"spate CPU per request: first minute {a:.2f} us, last minute {last_cpu:.2f} us "
              f"({last_cpu / a * 100:.1f} %); CPU 0 steal: first minute "
              f"{steal_percent(0, 60):.1f} %, last minute {steal_percent(t1 - 60, t1):.1f} %")
    fresh(d, mean(last), last_cpu)
    after = rss[6:] or rss
    print(f"RSS after the first minute: {min(after) / 1024:.1f} .. {max(after) / 1024:.1f} MiB "
          f"(spread {(max(after) - min(after)) / min(after) * 100:.1f} %); samples (MiB): "
          + " ".join(f"{r / 1024:.1f}" for r in rss))


def fresh(d, last_rate, last_cpu):
    """The soak's last minute against a fresh run of the same command right after it."""
    if not (os.path.exists(f"{d}/fresh.json") and os.path.exists(f"{d}/fresh.time")):
        return
    try:
        result = json.load(open(f"{d}/fresh.json"))
        user, system = map(float, open(f"{d}/fresh.time").read().split()[-2:])
    except (ValueError, OSError):
        print("fresh run: no result")
        return
    n = result["requests"]["completed"]
    rate = result["totals"]["requests_per_sec"]
    cpu = (user + system) / n * 1e6 if n else float("nan")
    line = (f"fresh run right after: {rate:,.0f} req/s, {cpu:.2f} us per request; the soak's last "
            f"minute is {last_rate / rate * 100:.1f} % of its rate")
    if last_cpu is not None:
        line += f" at {last_cpu / cpu * 100:.1f} % of its CPU per request"
    print(line)


if __name__ == "__main__":
    main()
