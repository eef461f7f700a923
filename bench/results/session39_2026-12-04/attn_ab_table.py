#!/usr/bin/env python3
"""Per-cell A/B of two lathe_bench_attention binaries' text output, two rounds each.

Usage: attn_ab_table.py A_round1 A_round2 B_round1 B_round2
Cells keyed by (shape, dtype, batch, context, policy, kernel label); prints both rounds' us,
B/A of the round means and whether every output fingerprint agrees, then summary statistics."""
import statistics
import sys


def load(path):
    cells = {}
    for line in open(path):
        p = line.split()
        if len(p) < 20 or "/" not in p[0] or "us" not in p:
            continue
        us = float(p[p.index("us") - 1])
        fnv = p[p.index("out") + 1] if "out" in p else ""
        cells[(p[0], p[1], p[2], p[3], p[4], p[12])] = (us, fnv)
    return cells


a1, a2, b1, b2 = (load(f) for f in sys.argv[1:5])
ratios, mismatched = [], 0
for key in a1:
    if all(key in d for d in (a2, b1, b2)):
        a, b = (a1[key][0] + a2[key][0]) / 2, (b1[key][0] + b2[key][0]) / 2
        same = len({d[key][1] for d in (a1, a2, b1, b2)}) == 1
        mismatched += not same
        ratios.append(b / a)
        print(" ".join(key), f"{a1[key][0]:8.1f} {a2[key][0]:8.1f} | {b1[key][0]:8.1f} {b2[key][0]:8.1f}  B/A {b / a:.3f}",
              "same-bytes" if same else "BYTES DIFFER")
print("cells", len(ratios), "geomean", round(statistics.geometric_mean(ratios), 4), "min", round(min(ratios), 4),
      "max", round(max(ratios), 4), "fingerprint mismatches", mismatched)
