#!/usr/bin/env python3
"""Summarizes a loadtest/cluster/bench.sh results directory.

Reads every run's report (`n<nodes>-u<users>-r<rate>-run<k>.json`, written by `cairn-loadtest --json`) and the CPU
the shared servers used during it (`….infra.json`), groups the runs by node count and rate, and prints one row per
group with the medians over its runs: deliveries per second, the share of expected deliveries that arrived, same-node
and cross-node p50/p99, the ratio of cross-node to same-node p99 (issue 16's aim: at most 2), and the CPU of the
nodes, Redis, PostgreSQL and the tester per delivery. With one node every delivery is same-node; its row is the
reference. Writes the same figures to summary.json beside the reports.
"""
import glob
import json
import os
import re
import statistics
import sys

NAME = re.compile(r"n(\d+)-u(\d+)-r([0-9.]+)-run(\d+)\.json$")


def load(directory):
    groups = {}
    for path in sorted(glob.glob(os.path.join(directory, "n*-u*-r*-run*.json"))):
        match = NAME.search(os.path.basename(path))
        if not match:
            continue
        nodes, users, rate = int(match.group(1)), int(match.group(2)), float(match.group(3))
        report = json.load(open(path))
        infra_path = path[: -len(".json")] + ".infra.json"
        infra = json.load(open(infra_path)) if os.path.exists(infra_path) else {}
        groups.setdefault((nodes, users, rate), []).append((report, infra))
    return groups


def figures(report, infra):
    paths = {p["path"]: p for p in report.get("byPath", [])}
    same, cross = paths.get("sameNode"), paths.get("crossNode")
    delivered = report["counters"]["deliveries"]
    window = report["windowSeconds"]
    node_cpu = sum(c["windowCpuSeconds"] for c in report.get("serverCosts", []))
    per = lambda cpu: cpu / delivered * 1e6 if delivered else None
    f = {
        "outcome": report["outcome"],
        "deliveriesPerSecond": report["deliveriesPerSecond"],
        "deliveredShare": report["deliveredShare"],
        "p50": report["latency"]["p50"],
        "p99": report["latency"]["p99"],
        "sameDeliveries": same["deliveries"] if same else 0,
        "crossDeliveries": cross["deliveries"] if cross else 0,
        "sameP50": same["latency"]["p50"] if same and same["deliveries"] else None,
        "sameP99": same["latency"]["p99"] if same and same["deliveries"] else None,
        "sameP999": same["latency"]["p999"] if same and same["deliveries"] else None,
        "crossP50": cross["latency"]["p50"] if cross and cross["deliveries"] else None,
        "crossP99": cross["latency"]["p99"] if cross and cross["deliveries"] else None,
        "crossP999": cross["latency"]["p999"] if cross and cross["deliveries"] else None,
        "sameShare": same["deliveredShare"] if same else None,
        "crossShare": cross["deliveredShare"] if cross else None,
        "nodesCpuUsPerDelivery": per(node_cpu),
        "nodesCpuShare": node_cpu / window if window else None,  # cores' worth
        "testerCpuUsPerDelivery": per(report["clientCost"]["windowCpuSeconds"]),
        # Redis and PostgreSQL are read around the whole tester run (ramp included), not its window alone.
        "redisCpuSeconds": infra.get("redisCpuSeconds"),
        "postgresCpuSeconds": infra.get("postgresCpuSeconds"),
    }
    if f["sameP99"] and f["crossP99"]:
        f["ratioP99"] = f["crossP99"] / f["sameP99"]
    else:
        f["ratioP99"] = None
    return f


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def show(value, digits=2, width=7):
    return f"{value:{width}.{digits}f}" if value is not None else " " * (width - 1) + "–"


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "."
    groups = load(directory)
    if not groups:
        print(f"no runs in {directory}")
        return 1
    rows = []
    for (nodes, users, rate), runs in sorted(groups.items(), key=lambda kv: (kv[0][2], -kv[0][0])):
        each = [figures(r, i) for r, i in runs]
        row = {"nodes": nodes, "users": users, "rateHz": rate, "runs": len(each)}
        row["completed"] = all(f["outcome"] == "completed" for f in each)
        for key in each[0]:
            if key != "outcome":
                row[key] = median([f[key] for f in each])
        row["ratioP99ByRun"] = [f["ratioP99"] for f in each]
        rows.append(row)

    header = (
        f"{'nodes':>5} {'users':>6} {'Hz':>4} {'runs':>4} {'deliv/s':>8} {'share%':>7} "
        f"{'same p50':>8} {'same p99':>8} {'cross p50':>9} {'cross p99':>9} {'x/same':>6} "
        f"{'all p99':>7} {'node µs/d':>9} {'tester µs/d':>11} {'redis s':>7} {'pg s':>6}"
    )
    print(f"medians over runs; latency in ms; x/same = cross-node p99 / same-node p99 (aim: ≤ 2)")
    print(header)
    for r in rows:
        print(
            f"{r['nodes']:5d} {r['users']:6d} {r['rateHz']:4g} {r['runs']:4d} "
            f"{show(r['deliveriesPerSecond'], 0, 8)} {show(r['deliveredShare'] * 100, 1, 7)} "
            f"{show(r['sameP50'], 2, 8)} {show(r['sameP99'], 2, 8)} {show(r['crossP50'], 2, 9)} "
            f"{show(r['crossP99'], 2, 9)} {show(r['ratioP99'], 2, 6)} {show(r['p99'], 2, 7)} "
            f"{show(r['nodesCpuUsPerDelivery'], 1, 9)} {show(r['testerCpuUsPerDelivery'], 1, 11)} "
            f"{show(r['redisCpuSeconds'], 2, 7)} {show(r['postgresCpuSeconds'], 2, 6)}"
            + ("" if r["completed"] else "  (a run did not complete)")
        )
    with open(os.path.join(directory, "summary.json"), "w") as out:
        json.dump(rows, out, indent=2, sort_keys=True)
        out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
