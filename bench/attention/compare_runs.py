#!/usr/bin/env python3
"""Cell-by-cell comparison of two lathe_bench_attention console logs of the same call.

Usage: compare_runs.py NEW.txt BASE.txt [--dtype bf16|fp8]

Prints, per (shape, KV dtype, batch, context, policy) cell present in both logs: % of the read
ceiling in BASE and NEW, the speed-up (BASE time / NEW time) and, for FP8 cells, NEW's FP8 time
over NEW's BF16 time of the same cell (0.5 would be the byte ratio).
"""
import argparse
import re

LINE = re.compile(
    r"(\S+)\s+(bf16|fp8)\s+B(\d+)\s+L(\d+)\s+(\S+)\s+\S+\s+splits\s+\d+\s+slices\s+\d+\s+rows\s+\d+\s+k\d+\s+"
    r"([\d.]+) us\s+\d+ GB/s\s+([\d.]+)%")


def parse(path):
    cells = {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if m:
                key = (m[1], m[2], int(m[3]), int(m[4]), m[5])
                cells[key] = (float(m[6]), float(m[7]))  # us, % of ceiling
    return cells


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("new")
    ap.add_argument("base")
    ap.add_argument("--dtype", choices=["bf16", "fp8"])
    args = ap.parse_args()
    new, base = parse(args.new), parse(args.base)
    print(f"{'shape':10} {'kv':4} {'B':>3} {'L':>6} {'policy':17} {'base %':>7} {'new %':>7} {'speed-up':>8} {'fp8/bf16':>8}")
    for key in sorted(new):
        if key not in base or (args.dtype and key[1] != args.dtype):
            continue
        (new_us, new_pct), (base_us, base_pct) = new[key], base[key]
        bf16 = new.get((key[0], "bf16") + key[2:])
        ratio = f"{new_us / bf16[0]:8.2f}" if key[1] == "fp8" and bf16 else f"{'':8}"
        print(f"{key[0]:10} {key[1]:4} {key[2]:3} {key[3]:6} {key[4]:17} {base_pct:7.1f} {new_pct:7.1f} "
              f"{base_us / new_us:8.2f} {ratio}")


if __name__ == "__main__":
    main()
