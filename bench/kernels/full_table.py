#!/usr/bin/env python3
"""Prints lathe_bench_kernels' default table (kernels_bench.txt, written by --out DIR) as the
markdown table docs/PERFORMANCE.md keeps: one row per (model, shape, dtype), one column per width,
each cell "ours us (% of the ceiling) / peer us (%)". Ours is the tier a stock serve runs at that
width (gemv, gemv_batch4, gemv_batch16, and gemv_batch32 at 17..32 rows where it ran, else the two
16-row halves); the peer is cuBLASLt FP8 for fp8 rows and cuBLAS BF16 for bf16 rows. Stdlib only.

    python3 bench/kernels/full_table.py DIR/kernels_bench.txt
"""
import argparse
import re
import sys

ROW = re.compile(r"^(\S+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(fp8|bf16)\s+(\d+)\s+(.+?)\s+([\d.]+)\s+(\d+)\s+([\d.]+)%$")
# The tiers a stock serve runs, in preference order: up to 16 rows one of the first three (each width
# has exactly one), at 17..32 rows the one-pass 32-row tier where it ran, else the two halves.
NARROW = ("gemv", "gemv_batch4", "gemv_batch16")
WIDE = ("gemv_batch32", "gemv_batch16 x2 halves")
PEER = {"fp8": "cublaslt fp8", "bf16": "cublas bf16"}


def parse(path):
    """{(model, shape, n, k, dtype): {m: {impl: (us, pct)}}} in file order."""
    cells = {}
    with open(path) as f:
        for line in f:
            match = ROW.match(line.rstrip("\n"))
            if not match:
                continue
            model, shape, n, k, dtype, m, impl, us, _gbs, pct = match.groups()
            key = (model, shape, int(n), int(k), dtype)
            cells.setdefault(key, {}).setdefault(int(m), {})[impl.strip()] = (float(us), float(pct))
    return cells


def ours_of(impls, m):
    """The stock serve's tier at width m among the row's impls, or None."""
    return next((impls[name] for name in (WIDE if m > 16 else NARROW) if name in impls), None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("table", help="kernels_bench.txt from lathe_bench_kernels --out DIR")
    args = parser.parse_args()
    cells = parse(args.table)
    if not cells:
        print(f"{args.table}: no benchmark rows", file=sys.stderr)
        return 2
    widths = sorted({m for by_m in cells.values() for m in by_m})
    print("| model | shape (n x k) | dtype | " + " | ".join(f"m={m}" for m in widths) + " |")
    print("|---|---|---|" + "---|" * len(widths))
    for (model, shape, n, k, dtype), by_m in cells.items():
        row = []
        for m in widths:
            impls = by_m.get(m, {})
            ours, peer = ours_of(impls, m), impls.get(PEER[dtype])
            if ours is None:
                row.append("–")
                continue
            cell = f"{ours[0]:.1f} ({ours[1]:.1f}%)"
            if peer is not None:
                cell += f" / {peer[0]:.1f} ({peer[1]:.1f}%)"
            row.append(cell)
        name = shape.replace("|", "\\|")  # a literal | inside a markdown cell
        print(f"| {model} | {name} {n}x{k} | {dtype} | " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
