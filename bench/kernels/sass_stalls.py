#!/usr/bin/env python3
"""Ranks the SASS of one kernel by warp-stall samples, from the source-page CSV that
bench/kernels/device_run.sh --ncu writes (ncu_<shape>_m<M>_<variant>_sass.csv).

Prints the share of stall samples and of executed instructions per opcode, then the most-sampled
instructions. Stdlib only.

    python3 bench/kernels/sass_stalls.py ncu_qwen3-8b_gate_up_m1_auto_sass.csv [--top 15]
"""
import argparse
import collections
import csv
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    with open(args.csv, newline="") as f:
        rows = list(csv.reader(f))
    header_at = next((i for i, r in enumerate(rows) if "Source" in r and "Warp Stall Sampling (All Samples)" in r), None)
    if header_at is None:
        print(f"{args.csv}: no source-page header (Source, Warp Stall Sampling (All Samples))", file=sys.stderr)
        return 2
    header, data = rows[header_at], rows[header_at + 1:]
    i_source = header.index("Source")
    i_samples = header.index("Warp Stall Sampling (All Samples)")
    i_executed = header.index("Instructions Executed")

    def number(text):
        try:
            return float(text.replace(",", "")) if text else 0.0
        except ValueError:
            return 0.0

    samples = sum(number(r[i_samples]) for r in data if len(r) > i_executed)
    executed = sum(number(r[i_executed]) for r in data if len(r) > i_executed)
    if samples <= 0 or executed <= 0:
        print(f"{args.csv}: no samples", file=sys.stderr)
        return 2
    by_stall, by_exec = collections.Counter(), collections.Counter()
    for r in data:
        if len(r) <= i_executed or not r[i_source].strip():
            continue
        words = r[i_source].split()
        opcode = (words[1] if words[0].startswith("@") and len(words) > 1 else words[0]).split(".")[0]
        by_stall[opcode] += number(r[i_samples])
        by_exec[opcode] += number(r[i_executed])
    print(f"{len(data)} SASS lines, {samples:.0f} stall samples, {executed:.0f} warp instructions executed")
    print(f"{'opcode':<10} {'stall %':>8} {'exec %':>8}")
    for opcode, value in by_stall.most_common(args.top):
        print(f"{opcode:<10} {100 * value / samples:8.1f} {100 * by_exec[opcode] / executed:8.1f}")
    print("most-sampled instructions:")
    ranked = sorted((r for r in data if len(r) > i_executed), key=lambda r: -number(r[i_samples]))
    for r in ranked[: args.top]:
        print(f"{100 * number(r[i_samples]) / samples:6.1f}%  {r[i_source].strip()[:100]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
