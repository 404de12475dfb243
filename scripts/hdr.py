#!/usr/bin/env python3
"""Read the `hdr_base64` histograms of spate's JSON report (HdrHistogram V2, compressed).

    scripts/hdr.py REPORT.json [PATH] [QUANTILE ...]

PATH is a dotted path to a histogram object in the report (default `latency`; also
`open_model.service`, `open_model.send_lag`); quantiles are fractions (default 0.5 0.9 0.99
0.999). Prints `q value_ms` per line. Importable: `quantiles(b64, [0.99])` -> values in ms.
Standard library only, so it runs wherever python3 does.
"""
import base64
import json
import struct
import sys
import zlib

V2 = 0x1C849303
V2_COMPRESSED = 0x1C849304


def _counts(raw):
    """Decoded (header, counts) of an uncompressed V2 histogram."""
    cookie, length, _offset, digits, lowest, _highest, _ratio = struct.unpack(">iiiiqqd", raw[:40])
    if cookie & ~0xF0 != V2:
        raise ValueError(f"not an HdrHistogram V2 payload (cookie {cookie:#x})")
    counts, payload, pos = [], raw[40 : 40 + length], 0
    while pos < len(payload):
        value, shift = 0, 0
        while True:  # LEB128, at most 9 bytes for 64 bits
            b = payload[pos]
            pos += 1
            if shift == 56:
                value |= b << 56
                break
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        value = (value >> 1) ^ -(value & 1)  # ZigZag
        if value < 0:
            counts.extend([0] * -value)  # a run of zeros
        else:
            counts.append(value)
    return digits, lowest, counts


def decode(b64):
    """(digits, lowest trackable value, counts per index) of a base64 V2 histogram."""
    blob = base64.b64decode(b64)
    cookie, length = struct.unpack(">ii", blob[:8])
    if cookie & ~0xF0 == V2_COMPRESSED:
        return _counts(zlib.decompress(blob[8 : 8 + length]))
    return _counts(blob)


def quantiles(b64, qs, unit=1e6):
    """The values at the quantiles qs, divided by `unit` (spate records nanoseconds: ms)."""
    digits, lowest, counts = decode(b64)
    largest = 2 * 10**digits
    sub_bucket_count = 1 << (largest - 1).bit_length()
    half = sub_bucket_count // 2
    half_magnitude = half.bit_length() - 1
    unit_magnitude = lowest.bit_length() - 1

    def value_at(index):
        bucket = (index >> half_magnitude) - 1
        sub = (index & (half - 1)) + half
        if bucket < 0:
            sub -= half
            bucket = 0
        low = sub << (bucket + unit_magnitude)
        # the highest value equivalent to `low`, as HdrHistogram reports quantiles
        return low + (1 << (bucket + unit_magnitude)) - 1

    total = sum(counts)
    out = []
    for q in qs:
        rank = max(1, int(-(-q * total // 1)))  # ceil(q * total), at least 1
        seen = 0
        for index, c in enumerate(counts):
            seen += c
            if seen >= rank:
                out.append(value_at(index) / unit)
                break
        else:
            out.append(float("nan"))
    return out


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    report = json.load(open(argv[1]))
    path = argv[2] if len(argv) > 2 and not argv[2][0].isdigit() else "latency"
    qs = [float(a) for a in argv[2:] if a[0].isdigit()] or [0.5, 0.9, 0.99, 0.999]
    node = report
    for key in path.split("."):
        node = node[key]
    for q, v in zip(qs, quantiles(node["hdr_base64"], qs)):
        print(f"{q} {v:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
