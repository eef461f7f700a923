#!/usr/bin/env python3
"""Cell-by-cell comparison of two lathe_bench_attention runs of the same call (an A/B of two builds).

Usage: compare_runs.py NEW BASE [--dtype bf16|fp8] [--any-kernel]

NEW and BASE are each a run's CSV (`--out DIR` writes DIR/attention_bench.csv) or its console log.
Prints, per (shape, KV dtype, batch, context, policy, kernel) cell present in both: % of the read
ceiling in BASE and NEW, the speed-up (BASE time / NEW time), for FP8 cells NEW's FP8 time over
NEW's BF16 time of the same cell (0.5 would be the byte ratio), and whether the two builds wrote
the same output bytes (the runs' FNV-1a fingerprints; "-" where a run has none).
--any-kernel matches cells whatever their kernel variant (each run then measures one variant, e.g.
14 against 22, which must give the same bytes).
--summary ends with one line: the cells compared, how many wrote different bytes, and the speed-up's
mean, min and max; the exit status is then 1 when any cell's bytes differ (an A/B of a lever that
must not change them, e.g. LATHE_ATTN_SPLIT_REDUCE).
"""
import argparse
import csv
import re
import sys

LINE = re.compile(
    r"(\S+)\s+(bf16|fp8)\s+B(\d+)\s+L(\d+)\s+(\S+)\s+(\S+)\s+splits\s+\d+\s+slices\s+\d+\s+rows\s+\d+\s+k(\S+)\s+"
    r"([\d.]+) us\s+\d+ GB/s\s+([\d.]+)%")
FINGERPRINT = re.compile(r"\bout ([0-9a-f]{16})\b")


def parse(path, arm=None):
    """{(shape, kv, batch, context, policy, kernel): (us, % of ceiling, fingerprint or None)} in file
    order; with `arm` (e.g. "decode_splitk") only that arm's rows."""
    cells = {}
    with open(path) as f:
        if path.endswith(".csv"):
            for r in csv.DictReader(line for line in f if not line.startswith("#")):
                if arm is None or r.get("arm") == arm:
                    key = (r["shape"], r["kv"], int(r["batch"]), int(r["context"]), r["policy"], r["kernel"])
                    cells[key] = (float(r["us"]), float(r["pct_ceiling"]), r.get("out_fnv") or None)
            return cells
        for line in f:
            m = LINE.match(line)
            if m and (arm is None or m[6] == arm):
                fp = FINGERPRINT.search(line)
                key = (m[1], m[2], int(m[3]), int(m[4]), m[5], m[7])
                cells[key] = (float(m[8]), float(m[9]), fp[1] if fp else None)
    return cells


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("new")
    ap.add_argument("base")
    ap.add_argument("--dtype", choices=["bf16", "fp8"])
    ap.add_argument("--any-kernel", action="store_true")
    ap.add_argument("--summary", action="store_true")
    args = ap.parse_args()
    new, base = parse(args.new), parse(args.base)
    if args.any_kernel:
        base = {k[:5] + (new_kernel,): v for k, v in base.items()
                for new_kernel in {n[5] for n in new if n[:5] == k[:5]}}
    print(f"{'shape':10} {'kv':4} {'B':>3} {'L':>6} {'policy':17} {'kernel':8} {'base %':>7} {'new %':>7} "
          f"{'speed-up':>8} {'fp8/bf16':>8} bytes")
    speedups, differ = [], 0
    for key in sorted(new):
        if key not in base or (args.dtype and key[1] != args.dtype):
            continue
        (new_us, new_pct, new_fp), (base_us, base_pct, base_fp) = new[key], base[key]
        bf16 = new.get((key[0], "bf16") + key[2:])
        ratio = f"{new_us / bf16[0]:8.2f}" if key[1] == "fp8" and bf16 else f"{'':8}"
        same = "-" if new_fp is None or base_fp is None else ("same" if new_fp == base_fp else "DIFF")
        speedups.append(base_us / new_us)
        differ += same == "DIFF"
        print(f"{key[0]:10} {key[1]:4} {key[2]:3} {key[3]:6} {key[4]:17} {key[5]:8} {base_pct:7.1f} {new_pct:7.1f} "
              f"{base_us / new_us:8.2f} {ratio} {same}")
    if args.summary:
        if not speedups:
            print("summary: no cell in both runs")
            return 1
        print(f"summary: {len(speedups)} cells, bytes differ in {differ}; speed-up mean "
              f"{sum(speedups) / len(speedups):.3f}, min {min(speedups):.3f}, max {max(speedups):.3f}")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
