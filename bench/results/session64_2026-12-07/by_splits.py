#!/usr/bin/env python3
"""Session 64's reading of every H100 run of 24 against 25 (BF16, auto+pack): the cells where 25
still runs the persistent grid after baab131 (more units than one wave holds, a last round on at
least half the SMs), grouped by the policy's split count and the context: 25's time over 24's
(> 1: the per-split 24 is faster). Run from bench/results/. The grid model is session 63's
(last_round.py: residency 3 under `auto`, splits = clamp(ceil(264 / heads), 1, 16)). Stdlib only.
"""
import collections
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "session63_2026-12-07"))
from last_round import RUNS, SMS, cells, per_sm, units_of  # noqa: E402

RUNS = dict(RUNS)
RUNS["s64c1"] = ["session64_2026-12-07/call1/rule/work/rule_r1", "session64_2026-12-07/call1/rule/work/rule_r2"]
RUNS["s64c1s"] = ["session64_2026-12-07/call1/rule/work/rule_small_r1",
                  "session64_2026-12-07/call1/rule/work/rule_small_r2"]
RUNS["s64c2"] = ["session64_2026-12-07/call2/work/wide_r1", "session64_2026-12-07/call2/work/wide_r2"]


def main():
    groups = collections.defaultdict(list)
    for run, dirs in RUNS.items():
        for (shape, batch, context), by_kernel in cells(dirs).items():
            heads, _, head_dim = map(int, shape.split("/"))
            units = units_of(shape, batch)
            if "24" not in by_kernel or "25" not in by_kernel or head_dim != 128 or units <= 3 * SMS:
                continue
            ctas = min(units, per_sm(units) * SMS)
            last = units - (math.ceil(units / ctas) - 1) * ctas
            if 2 * last < SMS:  # baab131 launches these per split
                continue
            splits = min(16, max(1, math.ceil(2 * SMS / heads)))
            ratio = (sum(by_kernel["25"]) / len(by_kernel["25"])) / (sum(by_kernel["24"]) / len(by_kernel["24"]))
            groups[(splits, min(context, 16384))].append((ratio, f"{run} {shape} b{batch} {context}"))
    print("splits | context | cells | 24 faster (> 0.3%) | 25 faster | 25/24 mean | min | max")
    for (splits, context), rows in sorted(groups.items()):
        ratios = [r for r, _ in rows]
        label = f"{context // 1024}k" + ("+" if context == 16384 else "")
        print(f"{splits} | {label} | {len(ratios)} | {sum(r > 1.003 for r in ratios)} | {sum(r < 0.997 for r in ratios)} | "
              f"{sum(ratios) / len(ratios):.3f} | {min(ratios):.3f} | {max(ratios):.3f}")


if __name__ == "__main__":
    main()
