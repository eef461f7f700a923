#!/usr/bin/env python3
"""Split-K kernel variants side by side: one row per (shape, KV dtype, batch, context, policy) cell,
one column per kernel variant, each the mean % of the read ceiling over the given runs of
lathe_bench_attention (`--out DIR` writes DIR/attention_bench.csv; run it with `--kernels A,B,...`).

Usage: kernel_columns.py RUN.csv [RUN.csv ...] [--base K]

A run's cells are averaged with the other runs' same cells (each run measures its own ceiling, so
percentages, not GB/s, are averaged). With --base K, each other column also gets its time against
K's (K's mean time over the variant's: above 1 means the variant is faster). Where the runs hold
more than one policy (e.g. `--policies auto+pack,auto+pack+slices`), a policy column follows the
context, since each policy's cells are rows of their own. The last column
groups the variants by the output bytes they wrote (the runs' fingerprints), e.g. "14=17=22
24=25": variants of one geometry must share a group, and a variant whose runs disagree is marked
"k?" (its bytes changed between runs). Stdlib only.
"""
import argparse
import sys
from collections import defaultdict

from compare_runs import parse  # one run's cells: {(shape, kv, B, L, policy, kernel): (us, %, fingerprint)}


def read_runs(paths):
    """{cell: {kernel: [(us, pct, fingerprint), ...]}} over all runs' split-K rows, cells and kernels
    in file order."""
    cells = defaultdict(lambda: defaultdict(list))
    for path in paths:
        for (*cell, kernel), value in parse(path, arm="decode_splitk").items():
            cells[tuple(cell)][kernel].append(value)
    return cells


def byte_groups(by_kernel):
    """The cell's variants grouped by fingerprint, e.g. "14=17 24=25"; "14?" where a variant's runs
    disagree or a run wrote none."""
    groups = {}
    for kernel, runs in by_kernel.items():
        prints = {fp for _, _, fp in runs}
        key = prints.pop() if len(prints) == 1 and None not in prints else f"?{kernel}"
        groups.setdefault(key, []).append(kernel if not key.startswith("?") else kernel + "?")
    return " ".join("=".join(members) for members in groups.values())


def mean(values):
    return sum(values) / len(values)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", nargs="+", help="attention_bench.csv files of lathe_bench_attention runs")
    parser.add_argument("--base", help="kernel variant the others' times are compared with")
    args = parser.parse_args()
    cells = read_runs(args.runs)
    if not cells:
        print("no split-K cells in " + ", ".join(args.runs), file=sys.stderr)
        return 2
    kernels = []
    for by_kernel in cells.values():
        kernels += [k for k in by_kernel if k not in kernels]
    if args.base is not None and args.base not in kernels:
        print(f"--base {args.base}: no such kernel in the runs ({', '.join(kernels)})", file=sys.stderr)
        return 2
    policies = {cell[4] for cell in cells}
    policy_column = len(policies) > 1
    header = ["shape", "kv", "B", "L"] + (["policy"] if policy_column else []) + [f"k{k} %" for k in kernels]
    if args.base is not None:
        header += [f"k{k} vs k{args.base}" for k in kernels if k != args.base]
    print(" | ".join(header + ["bytes alike"]))
    for (shape, kv, batch, context, policy), by_kernel in sorted(cells.items()):
        row = [shape, kv, str(batch), str(context)] + ([policy] if policy_column else [])
        row += [f"{mean([p for _, p, _ in by_kernel[k]]):.1f}" if k in by_kernel else "-" for k in kernels]
        if args.base is not None:
            base = by_kernel.get(args.base)
            for k in kernels:
                if k == args.base:
                    continue
                if base and k in by_kernel:
                    row.append(f"{mean([u for u, _, _ in base]) / mean([u for u, _, _ in by_kernel[k]]):.3f}")
                else:
                    row.append("-")
        row.append(byte_groups(by_kernel))
        print(" | ".join(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
