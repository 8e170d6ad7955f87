#!/usr/bin/env python3
"""Turns JMH JSON results of KeyedDecisionBenchmark into a markdown table.

usage: jmh_to_md.py OUTPUT.md RESULT.json [RESULT.json ...]

Columns: threads, keys, implementation, ops/s (+- error), bytes allocated per op
(gc.alloc.rate.norm, needs -prof gc), and for the Sluice rows the ratio to the best peer
(highest ops/s among the naive map of fixed-window counters, Bucket4j, Resilience4j and Guava) of the same (threads, keys) case.
Standard library only.
"""
import json
import sys
from collections import defaultdict

SLUICE = ("sluice", "sluiceSystemClock", "sluiceDecision", "sluiceFixedWindow", "sluiceSlidingWindow")
PEERS = ("naiveWindows", "bucket4j", "resilience4j", "guava")
ORDER = {name: i for i, name in enumerate(SLUICE + PEERS)}
NAMES = {
    "sluice": "Sluice tryAcquire",
    "sluiceSystemClock": "Sluice tryAcquire, System.nanoTime() per decision",
    "sluiceDecision": "Sluice acquire (Decision)",
    "sluiceFixedWindow": "Sluice tryAcquire, fixed window",
    "sluiceSlidingWindow": "Sluice tryAcquire, sliding window counter",
    "naiveWindows": "naive CHM of fixed-window counters",
    "bucket4j": "Bucket4j + CHM",
    "resilience4j": "Resilience4j + CHM",
    "guava": "Guava + CHM",
}


def per_second(value, unit):
    """JMH throughput score in ops/s whatever the output time unit."""
    scale = {"ops/s": 1, "ops/ms": 1e3, "ops/us": 1e6, "ops/\u00b5s": 1e6, "ops/ns": 1e9,
             "ops/min": 1 / 60}
    if unit not in scale:
        raise SystemExit("unexpected unit %r (run in Throughput mode)" % unit)
    return value * scale[unit]


def fmt_ops(value):
    if value != value:  # NaN: a single measurement iteration has no error
        return "n/a"
    if value >= 1e6:
        return "%.2f M" % (value / 1e6)
    if value >= 1e3:
        return "%.1f k" % (value / 1e3)
    return "%.0f" % value


def load(paths):
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for r in json.load(f):
                method = r["benchmark"].rsplit(".", 1)[1]
                pm = r["primaryMetric"]
                unit = pm["scoreUnit"]
                alloc = r.get("secondaryMetrics", {}).get("gc.alloc.rate.norm")
                rows.append({
                    "threads": int(r["threads"]),
                    "keys": int(r.get("params", {}).get("keys", 0)),
                    "method": method,
                    "ops": per_second(pm["score"], unit),
                    "err": per_second(float(pm.get("scoreError", "nan")), unit),
                    "alloc": alloc["score"] if alloc else None,
                })
    return rows


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out, paths = argv[1], argv[2:]
    rows = load(paths)
    if not rows:
        raise SystemExit("no results in " + ", ".join(paths))
    cases = defaultdict(list)
    for r in rows:
        cases[(r["threads"], r["keys"])].append(r)

    lines = [
        "## Keyed decisions (allowed path, known keys)",
        "",
        "Throughput of one decision \"key -> state -> decision\"; keys = 1 is one hot key, "
        "keys = 100000 draws uniformly from 100,000 pre-inserted keys. Peers keep a "
        "ConcurrentHashMap<String, limiter> (get, computeIfAbsent on a miss). "
        "\"vs best peer\" divides Sluice's ops/s by the fastest peer of the same case.",
        "",
        "| threads | keys | implementation | ops/s (\u00b1 error) | B/op (gc.alloc.rate.norm) | vs best peer |",
        "|---:|---:|---|---:|---:|---:|",
    ]
    summary = []
    for (threads, keys) in sorted(cases):
        case = sorted(cases[(threads, keys)], key=lambda r: ORDER.get(r["method"], 99))
        peers = [r for r in case if r["method"] in PEERS]
        best = max(peers, key=lambda r: r["ops"]) if peers else None
        for r in case:
            ratio = ""
            if r["method"] in SLUICE and best:
                ratio = "%.2fx (%s)" % (r["ops"] / best["ops"], best["method"])
                summary.append((threads, keys, NAMES.get(r["method"], r["method"]), ratio))
            elif best is r:
                ratio = "best peer"
            alloc = "" if r["alloc"] is None else "%.1f" % r["alloc"]
            lines.append("| %d | %d | %s | %s \u00b1 %s | %s | %s |" % (
                threads, keys, NAMES.get(r["method"], r["method"]), fmt_ops(r["ops"]),
                fmt_ops(r["err"]), alloc, ratio))
    if summary:
        lines += ["", "### Sluice / best peer", "", "| threads | keys | Sluice path | ratio (best peer) |",
                  "|---:|---:|---|---:|"]
        lines += ["| %d | %d | %s | %s |" % s for s in summary]
    lines.append("")
    text = "\n".join(lines)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
