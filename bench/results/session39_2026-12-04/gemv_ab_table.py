#!/usr/bin/env python3
"""Per-shape A/B of two lathe_bench_kernels binaries' own-tier rows (impl gemv*), two rounds each.

Usage: gemv_ab_table.py A_round1 A_round2 B_round1 B_round2
Prints each (model, shape, dtype, m) with both rounds' microseconds and B/A of the round means,
then the geometric mean, min and max of B/A."""
import statistics
import sys


def load(path):
    rows = {}
    for line in open(path):
        p = line.split()
        if len(p) < 10 or not p[0].startswith("qwen3") or not p[6].startswith("gemv"):
            continue
        rows[(p[0], p[1], p[4], p[5])] = float(p[-3])
    return rows


a1, a2, b1, b2 = (load(f) for f in sys.argv[1:5])
ratios = []
for key in a1:
    if key in a2 and key in b1 and key in b2:
        a, b = (a1[key] + a2[key]) / 2, (b1[key] + b2[key]) / 2
        ratios.append(b / a)
        print(" ".join(key), f"{a1[key]:7.1f} {a2[key]:7.1f} | {b1[key]:7.1f} {b2[key]:7.1f}  B/A {b / a:.3f}")
print("n", len(ratios), "geomean", round(statistics.geometric_mean(ratios), 4), "min", round(min(ratios), 4),
      "max", round(max(ratios), 4))
