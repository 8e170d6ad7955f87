#!/usr/bin/env python3
"""The README's accuracy-kit tables, from the kit's own output.

    ./mvnw -B -o -pl limiter-sync-testkit test -Dtest=AccuracyKitTest > kit.log
    python3 limiter-sync-testkit/kit-tables.py kit.log

Prints two markdown tables: the worst case of each group (mode, window, nodes) for window limits, and
every approximate-mode run of window limits (the <details> table), and the worst cases of the runs
with each key on one node. Reads the lines the kit prints
("accuracy kit: <profile> (<window>) | <n> node(s), <mode>, ... | seed ...: ...").
"""
import re
import sys
from collections import OrderedDict

LINE = re.compile(
    r"accuracy kit: (?P<profile>.+?) \((?P<window>fixed|sliding|bucket)\)(?P<limit> limit \d+)? \| "
    r"(?P<nodes>\d+) nodes?, (?P<mode>approximate|reservation|exact)(?P<rest>[^|]*)\| seed \d+: (?P<requests>[\d,]+) requests; "
    r"admitted (?P<admitted>[\d.]+)% of exact .*?false denials [\d,]+ \((?P<fd>[\d.]+)%\), not made up in their "
    r"key-window (?P<notmade>[\d.]+)%, below half the limit (?P<half>\d+); over worst (?P<over>[\d.]+) permits.*?"
    r"key-windows over the bound (?P<kwover>\d+) of [\d,]+; store calls (?P<calls>[\d.]+) /1k.*?"
    r"decisions that waited (?P<waited>[\d.]+)%")


def rows(path):
    out = []
    for line in open(path, encoding="utf-8"):
        m = LINE.search(line)
        if m:
            d = m.groupdict()
            d["profile"] = d["profile"] + (d["limit"] or "")
            d["onenode"] = "each key on one node" in d["rest"]
            out.append(d)
    return out


def main():
    every = [r for r in rows(sys.argv[1]) if r["window"] != "bucket"]
    if not every:
        sys.exit("kit-tables: no 'accuracy kit:' lines in " + sys.argv[1])
    runs = [r for r in every if not r["onenode"]]
    summary(runs)
    print()
    approx = [r for r in runs if r["mode"] == "approximate"]
    print("<details><summary>Every approximate-mode run of the kit (%d rows)</summary>" % len(approx))
    print()
    print("| profile | window | nodes | admitted vs exact | false denials | not made up | worst over | waited"
          " | store calls /1k |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in approx:
        print("| %s | %s | %s | %s%% | %s%% | %s%% | %s | %.0f%% | %.0f |" % (
            r["profile"], r["window"], r["nodes"], r["admitted"], r["fd"], r["notmade"], r["over"],
            float(r["waited"]), float(r["calls"])))
    print()
    print("</details>")
    onenode = [r for r in every if r["onenode"]]
    if onenode:
        print()
        print("Each key on one node (every request of a key to the same node):")
        print()
        summary(onenode)


def summary(runs):
    groups = OrderedDict()
    for mode in ("approximate", "reservation", "exact"):
        for window in ("fixed", "sliding"):
            for nodes in ("1", "3", "8"):
                groups[(mode, window, nodes)] = [
                    r for r in runs if (r["mode"], r["window"], r["nodes"]) == (mode, window, nodes)]
    print("| mode | window | nodes | worst over-admission | key-windows over the bound | false denials (worst profile)"
          " | not made up in their window (worst) | below half the limit | admitted vs exact (lowest)"
          " | decisions that waited |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (mode, window, nodes), rs in groups.items():
        if not rs:
            continue
        worst_fd = max(rs, key=lambda r: float(r["fd"]))
        waited = [float(r["waited"]) for r in rs]
        print("| %s | %s | %s | %.2f permits | %d | %s%% (%s) | %.3f%% | %d | %.2f%% | %.0f–%.0f%% |" % (
            mode, window, nodes, max(float(r["over"]) for r in rs), sum(int(r["kwover"]) for r in rs),
            worst_fd["fd"], worst_fd["profile"], max(float(r["notmade"]) for r in rs), sum(int(r["half"]) for r in rs),
            min(float(r["admitted"]) for r in rs), min(waited), max(waited)))


if __name__ == "__main__":
    main()
