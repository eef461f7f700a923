#!/usr/bin/env python3
"""The issue-5 target accounting from one lathe_bench_attention CSV and one SDPA CSV.

Usage: targets.py BENCH_CSV SDPA_CSV [--kv bf16] [--kernel serve] [--policy auto+pack]
                  [--b1-policy auto+pack+slices]

BENCH_CSV: a lathe_bench_attention run (its `# read ceiling` header gives the ceiling; SDPA's GB/s
is put against the same ceiling). SDPA_CSV: tools/peers/sdpa_decode.py in the same device call.
Where the CSV has `read_us` (the read kernel over each cell's bytes), a `read %` column gives
that kernel's % of the ceiling: how far one launch of that size can get at all.
Rows are taken for one KV dtype and policy, and for the split-K kernel whose label starts with
--kernel (`serve` takes serve21/serve16/serve14, each batch on the geometry a serve of that width
runs; a number takes that variant); non-split plans (kernel "-") are taken too. --b1-policy takes
batch 1 from another policy: `auto+pack+slices` is what a single-sequence serve runs (its auto
slice cap), the batch-1 row of a serve's own configuration. Prints, per cell, our % of
the ceiling, SDPA's, and SDPA time / ours, then the three counts the issue states:
  - >= 85% of the ceiling at batch 1 for contexts >= 16k;
  - >= 85% at batch >= 16 for contexts >= 4k;
  - no slower than SDPA (within 3%: SDPA / ours >= 0.97) on every shape, and faster wherever SDPA
    is below 85% of the ceiling.
"""
import argparse
import csv
import re

from tables import load  # (read ceiling, rows) of a benchmark CSV


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("sdpa")
    ap.add_argument("--kv", default="bf16")
    ap.add_argument("--kernel", default="serve")
    ap.add_argument("--policy", default="auto+pack")
    ap.add_argument("--b1-policy", help="the policy of the batch-1 rows (default: --policy)")
    args = ap.parse_args()
    ceiling, rows = load(args.bench)
    if ceiling is None:
        raise SystemExit(f"{args.bench}: no '# read ceiling' header line")
    sdpa = {}
    with open(args.sdpa) as f:
        for r in csv.DictReader(f):
            sdpa[(r["shape"], int(r["batch"]), int(r["context"]))] = (float(r["us"]), float(r["gbs"]))

    ours = {}
    for r in rows:
        wanted = args.b1_policy if args.b1_policy and int(r["batch"]) == 1 else args.policy
        if r["kv"] != args.kv or r["policy"] != wanted:
            continue
        if r["kernel"] != "-" and not re.fullmatch(re.escape(args.kernel) + r"\d*", r["kernel"]):
            continue
        read_us = float(r["read_us"]) if r.get("read_us") else 0.0
        read_pct = float(r["pct_ceiling"]) * float(r["us"]) / read_us if read_us > 0 else None
        ours[(r["shape"], int(r["batch"]), int(r["context"]))] = (float(r["us"]), float(r["pct_ceiling"]), read_pct)
    if not ours:
        raise SystemExit("no rows match --kv / --kernel / --policy")

    b1_label = f" (batch 1: {args.b1_policy})" if args.b1_policy else ""
    print(f"read ceiling {ceiling:.0f} GB/s; {args.kv}, policy {args.policy}{b1_label}, kernel {args.kernel}")
    has_read = any(v[2] is not None for v in ours.values())
    print(f"{'shape':10} {'B':>3} {'L':>6} {'ours %':>7}" + (f" {'read %':>7}" if has_read else "")
          + f" {'SDPA %':>7} {'SDPA/ours':>9}")
    b1 = wide = parity = compared = 0
    b1_cells = wide_cells = b1_reachable = wide_reachable = 0
    for key in sorted(ours, key=lambda k: (k[0], k[1], k[2])):
        us, pct, read_pct = ours[key]
        shape, batch, context = key
        line = f"{shape:10} {batch:>3} {context:>6} {pct:7.1f}"
        if has_read:
            line += f" {read_pct:7.1f}" if read_pct is not None else f" {'-':>7}"
        reachable = read_pct is not None and read_pct >= 85.0
        if key in sdpa:
            s_us, s_gbs = sdpa[key]
            s_pct = 100.0 * s_gbs / ceiling
            ratio = s_us / us
            compared += 1
            # Within 3% of SDPA, and faster where SDPA is below 85% of the ceiling.
            ok = ratio >= 0.97 and (s_pct >= 85.0 or ratio >= 1.0)
            parity += ok
            line += f" {s_pct:7.1f} {ratio:9.2f}{'' if ok else '  <'}"
        print(line)
        if batch == 1 and context >= 16384:
            b1_cells += 1
            b1 += pct >= 85.0
            b1_reachable += reachable
        if batch >= 16 and context >= 4096:
            wide_cells += 1
            wide += pct >= 85.0
            wide_reachable += reachable
    reach = lambda n: f" (the read kernel reaches 85% in {n} of them)" if has_read else ""
    print(f">= 85% at batch 1, L >= 16k: {b1} of {b1_cells}{reach(b1_reachable)}")
    print(f">= 85% at batch >= 16, L >= 4k: {wide} of {wide_cells}{reach(wide_reachable)}")
    print(f"SDPA target met (within 3%, faster where SDPA < 85%): {parity} of {compared}  ('<' marks the others)")


if __name__ == "__main__":
    main()
