#!/usr/bin/env python3
"""Turns the JSON reports of loadtest/compare.sh into one table (Markdown, printed and saved as summary.md) and a
chart of p99 latency against delivery rate (p99-vs-rate.svg, hand-written SVG: no plotting library needed).

When a configuration (server, users, rate) was run several times (compare.sh's RUNS), its runs are folded into one
by the median of each figure, and a second table lists every step with its median and each run's figures, so the
spread between identical runs is visible.

Usage: loadtest/summarize.py RESULTS_DIR [--p99-bound 50] [--min-share 0.99] [--fixed-rate 1] [--svg PATH]
"""
import argparse
import glob
import json
import math
import os
import sys


def load(results):
    runs = []
    for path in sorted(glob.glob(os.path.join(results, "*.json"))):
        try:
            r = json.load(open(path))
        except (OSError, ValueError):
            continue
        if isinstance(r, dict) and "setup" in r and "latency" in r:
            runs.append(r)
    return runs


def median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def fold(runs):
    """One run per (server, users, rate): the median of each figure over its repeats."""
    groups = {}
    for r in runs:
        key = (r["setup"]["server"], r["setup"]["users"], r["setup"]["rateHz"])
        groups.setdefault(key, []).append(r)
    folded = []
    for key in sorted(groups):
        same = groups[key]
        m = json.loads(json.dumps(same[0]))
        m["repeats"] = same
        m["outcome"] = "completed" if all(r["outcome"] == "completed" for r in same) else next(
            r["outcome"] for r in same if r["outcome"] != "completed")
        m["deliveriesPerSecond"] = median(r["deliveriesPerSecond"] for r in same)
        m["deliveredShare"] = median(r["deliveredShare"] for r in same)
        m["windowSeconds"] = median(r["windowSeconds"] for r in same)
        for k in m["latency"]:
            if isinstance(m["latency"][k], (int, float)):
                m["latency"][k] = median(r["latency"].get(k) for r in same)
        for cost in ("serverCost", "clientCost"):
            if isinstance(m.get(cost), dict):
                for k, v in m[cost].items():
                    if isinstance(v, (int, float)):
                        m[cost][k] = median((r.get(cost) or {}).get(k) for r in same)
        folded.append(m)
    return folded


def steps(runs, bound, share):
    """Every step: the median verdict and each repeat's deliveries/s, p99 and server CPU per delivery (and the time
    the hypervisor stole from CPU 0, where any was)."""
    lines = [
        "| users | server | rate Hz | runs | median deliveries/s | median p99 ms | median delivered | "
        "median server CPU µs/delivery | each run: deliveries/s · p99 ms | sustained |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for m in sorted(runs, key=lambda r: (r["setup"]["users"], r["setup"]["server"], r["setup"]["rateHz"])):
        cpu = (m.get("serverCost") or {}).get("windowCpuSeconds")
        delivered = m["deliveriesPerSecond"] * m["windowSeconds"]
        per = f"{cpu / delivered * 1e6:.1f}" if cpu and delivered > 0 else "–"
        each = ", ".join(f"{r['deliveriesPerSecond']:,.0f} · {r['latency']['p99']:.1f}{stolen(r)}" for r in m["repeats"])
        lines.append(
            f"| {m['setup']['users']} | {m['setup']['server']} | {m['setup']['rateHz']:g} | {len(m['repeats'])} | "
            f"{m['deliveriesPerSecond']:,.0f} | {m['latency']['p99']:.1f} | {100 * m['deliveredShare']:.1f}% | {per} | "
            f"{each} | {'yes' if sustained(m, bound, share) else 'no'} |")
    return "\n".join(lines)


def stolen(r):
    """' · CPU 0 stolen a% (worst second b%)' where the report records stolen time (compare.sh pins the server to CPU
    0) and any was stolen; '' otherwise."""
    window = (r.get("stolen") or [0])[0]
    worst = max((s["stolen"][0] for s in r.get("perSecond", []) if s.get("stolen")), default=0)
    if window <= 0 and worst <= 0:
        return ""
    return f" · CPU 0 stolen {100 * window:.0f}% (worst second {100 * worst:.0f}%)"


def sustained(r, bound, share):
    return r["outcome"] == "completed" and r["latency"]["p99"] <= bound and r["deliveredShare"] >= share


def table(runs, bound, share, fixed):
    users = sorted({r["setup"]["users"] for r in runs})
    lines = [
        f"| users | server | highest sustained deliveries/s (p99 ≤ {bound:g} ms) | at rate Hz | "
        f"p50 / p90 / p99 / p99.9 / max ms at {fixed:g} Hz | deliveries/s at {fixed:g} Hz | "
        f"server CPU s (window) | CPU µs per delivery | tester CPU µs per delivery | peak RSS MiB | KiB per user |",
        "|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    ratios = []
    for n in users:
        best = {}
        for kind in ("cairn", "mosquitto", "nchan"):
            mine = [r for r in runs if r["setup"]["users"] == n and r["setup"]["server"] == kind]
            if not mine:
                continue
            ok = [r for r in mine if sustained(r, bound, share)]
            top = max(ok, key=lambda r: r["deliveriesPerSecond"]) if ok else None
            best[kind] = top["deliveriesPerSecond"] if top else 0.0
            at = [r for r in mine if abs(r["setup"]["rateHz"] - fixed) < 1e-9]
            f = at[0] if at else None
            l = f["latency"] if f else None
            cost = (f or {}).get("serverCost") or {}
            cpu = cost.get("windowCpuSeconds")
            per = (cpu / (f["deliveriesPerSecond"] * f["windowSeconds"]) * 1e6
                   if f and cpu and f["deliveriesPerSecond"] > 0 else None)
            # The tester's own CPU over the same window (reports before 2026-11-23 lack it): on two cores it competes
            # with the server, and its share differs between the WebSocket and the MQTT side.
            tester = ((f or {}).get("clientCost") or {}).get("windowCpuSeconds")
            tester_per = (tester / (f["deliveriesPerSecond"] * f["windowSeconds"]) * 1e6
                          if f and tester and f["deliveriesPerSecond"] > 0 else None)
            lines.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
                n, kind,
                f"{top['deliveriesPerSecond']:,.0f}" if top else "none",
                f"{top['setup']['rateHz']:g}" if top else "–",
                " / ".join(f"{l[k]:.2f}" for k in ("p50", "p90", "p99", "p999", "max")) if l else "–",
                f"{f['deliveriesPerSecond']:,.0f}" if f else "–",
                f"{cpu:.2f}" if cpu is not None else "–",
                f"{per:.1f}" if per is not None else "–",
                f"{tester_per:.1f}" if tester_per is not None else "–",
                f"{cost['peakRssKiB'] / 1024:.1f}" if cost.get("peakRssKiB") else "–",
                f"{cost['bytesPerUser'] / 1024:.1f}" if cost.get("bytesPerUser") else "–",
            ))
        for peer in ("mosquitto", "nchan"):
            if best.get(peer) and "cairn" in best:
                ratios.append((peer, n, best["cairn"] / best[peer]))
    text = "\n".join(lines)
    for peer, name in (("mosquitto", "Mosquitto"), ("nchan", "nchan")):
        mine = [(n, x) for p, n, x in ratios if p == peer]
        if mine:
            text += f"\n\nCairn / {name}, highest sustained delivery rate: " + ", ".join(
                f"{n} users {x:.2f}×" for n, x in mine)
    return text


def svg(runs, bound, path):
    series = {}
    for r in runs:
        if r["outcome"] != "completed" or r["deliveriesPerSecond"] <= 0:
            continue
        key = (r["setup"]["server"], r["setup"]["users"])
        series.setdefault(key, []).append((r["deliveriesPerSecond"], max(r["latency"]["p99"], 0.01)))
    if not series:
        return False
    W, H, L, R, T, B = 760, 460, 70, 190, 30, 50
    xmax = max(x for pts in series.values() for x, _ in pts) * 1.05
    ymin = 0.1
    ymax = max(max(y for pts in series.values() for _, y in pts), bound) * 2
    lx0, lx1 = math.log10(ymin), math.log10(ymax)

    def px(x):
        return L + (W - L - R) * x / xmax

    def py(y):
        return T + (H - T - B) * (1 - (math.log10(max(y, ymin)) - lx0) / (lx1 - lx0))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2 - 60}" y="18" font-size="14">p99 latency against delivery rate</text>']
    step = 10 ** math.floor(math.log10(xmax / 5))
    step = next(s * step for s in (1, 2, 5, 10) if xmax / (s * step) <= 8)
    x = 0
    while x <= xmax:
        out.append(f'<line x1="{px(x):.1f}" y1="{T}" x2="{px(x):.1f}" y2="{H - B}" stroke="#eee"/>')
        out.append(f'<text x="{px(x):.1f}" y="{H - B + 16}" text-anchor="middle">{x / 1000:g}k</text>')
        x += step
    e = math.floor(lx0)
    while e <= lx1:
        for m in (1, 2, 5):
            y = m * 10 ** e
            if ymin <= y <= ymax:
                out.append(f'<line x1="{L}" y1="{py(y):.1f}" x2="{W - R}" y2="{py(y):.1f}" stroke="#eee"/>')
                out.append(f'<text x="{L - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
        e += 1
    out.append(f'<line x1="{L}" y1="{py(bound):.1f}" x2="{W - R}" y2="{py(bound):.1f}" stroke="#c00" stroke-dasharray="6 4"/>')
    out.append(f'<text x="{W - R - 4}" y="{py(bound) - 5:.1f}" text-anchor="end" fill="#c00">p99 = {bound:g} ms</text>')
    out.append(f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" stroke="#333"/>')
    out.append(f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">deliveries per second</text>')
    out.append(f'<text transform="translate(16 {(T + H - B) / 2}) rotate(-90)" text-anchor="middle">p99 ms (log)</text>')
    blues = ["#9ecae1", "#4292c6", "#2171b5", "#08519c", "#08306b"]
    oranges = ["#fdae6b", "#fd8d3c", "#e6550d", "#a63603", "#7f2704"]
    greens = ["#a1d99b", "#74c476", "#31a354", "#006d2c", "#00441b"]
    palettes = {"cairn": blues, "mosquitto": oranges, "nchan": greens}
    dashes = {"cairn": "", "mosquitto": ' stroke-dasharray="4 2"', "nchan": ' stroke-dasharray="1 2"'}
    keys = sorted(series)
    for i, key in enumerate(keys):
        kind, n = key
        same = [k for k in keys if k[0] == kind]
        palette = palettes.get(kind, oranges)
        color = palette[min(same.index(key), len(palette) - 1)]
        pts = sorted(series[key])
        d = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        dash = dashes.get(kind, ' stroke-dasharray="4 2"')
        out.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        for x, y in pts:
            if kind == "cairn":
                shape = f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{color}"/>'
            elif kind == "nchan":
                shape = (f'<polygon points="{px(x):.1f},{py(y) - 4:.1f} {px(x) + 4:.1f},{py(y) + 3:.1f} '
                         f'{px(x) - 4:.1f},{py(y) + 3:.1f}" fill="{color}"/>')
            else:
                shape = f'<rect x="{px(x) - 3:.1f}" y="{py(y) - 3:.1f}" width="6" height="6" fill="{color}"/>'
            out.append(shape)
        ly = T + 10 + 18 * i
        out.append(f'<line x1="{W - R + 12}" y1="{ly}" x2="{W - R + 36}" y2="{ly}" stroke="{color}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{W - R + 42}" y="{ly + 4}">{kind} {n:,} users</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("results")
    p.add_argument("--p99-bound", type=float, default=50)
    p.add_argument("--min-share", type=float, default=0.99)
    p.add_argument("--fixed-rate", type=float, default=1)
    p.add_argument("--svg")
    a = p.parse_args()
    runs = load(a.results)
    if not runs:
        print(f"summarize.py: no reports in {a.results}", file=sys.stderr)
        return 1
    runs = fold(runs)
    text = table(runs, a.p99_bound, a.min_share, a.fixed_rate)
    text += "\n\nEvery step (median of its runs):\n\n" + steps(runs, a.p99_bound, a.min_share)
    print(text)
    with open(os.path.join(a.results, "summary.md"), "w") as f:
        f.write(text + "\n")
    chart = a.svg or os.path.join(a.results, "p99-vs-rate.svg")
    if svg(runs, a.p99_bound, chart):
        print(f"\nchart: {chart}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
