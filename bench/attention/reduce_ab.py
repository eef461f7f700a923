#!/usr/bin/env python3
"""Compares lathe_bench_attention runs of two arms of a byte-neutral lever (e.g. the split reduce
by warps against by head CTAs, LATHE_ATTN_REDUCE_WARPS=off|on): per cell (shape, KV dtype,
batch, context, policy, kernel), whether every run's output hash agrees, and the mean time of the
second arm over the first. Stdlib only.

    python3 bench/attention/reduce_ab.py --a off_r1.csv off_r2.csv --b on_r1.csv on_r2.csv
"""
import argparse
import csv
import statistics
import sys


def load(paths):
    cells = {}
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(line for line in f if not line.startswith("#")):
                key = (row["shape"], row["kv"], int(row["batch"]), int(row["context"]), row["policy"], row["kernel"])
                cells.setdefault(key, []).append((float(row["us"]), row["out_fnv"]))
    return cells


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--a", nargs="+", required=True, help="runs of the first arm")
    parser.add_argument("--b", nargs="+", required=True, help="runs of the second arm")
    args = parser.parse_args()
    a, b = load(args.a), load(args.b)
    common = sorted(set(a) & set(b))
    if not common:
        print("no cell in both arms", file=sys.stderr)
        return 2
    differ = 0
    ratios = []
    print("shape      kv   batch context policy           kernel   a_us     b_us     b/a")
    for key in common:
        hashes = {h for _, h in a[key]} | {h for _, h in b[key]}
        if len(hashes) != 1:
            differ += 1
        ta = statistics.mean(t for t, _ in a[key])
        tb = statistics.mean(t for t, _ in b[key])
        ratios.append(tb / ta)
        print(f"{key[0]:10} {key[1]:4} {key[2]:5} {key[3]:7} {key[4]:16} {key[5]:7} {ta:8.2f} {tb:8.2f} "
              f"{tb / ta:6.3f}{'  BYTES DIFFER' if len(hashes) != 1 else ''}")
    faster = sum(r < 0.997 for r in ratios)
    slower = sum(r > 1.003 for r in ratios)
    print(f"cells {len(common)}: output hashes differ in {differ}; b/a mean {statistics.mean(ratios):.3f}, "
          f"min {min(ratios):.3f}, max {max(ratios):.3f}; b faster (< 0.997) in {faster}, slower (> 1.003) in {slower}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
