#!/usr/bin/env python3
"""Session 63's reading of the 24-against-25 runs: for every BF16 cell past one wave, the CTAs that
run the persistent grid's last round, and 25's time over 24's, split at a threshold of last-round
CTAs (default 66, half an H100's SMs). Run from bench/results/; `--list` prints every cell.

The grid is sized as backends/cuda/wave_fill.h sizes it under `auto` for a BF16 cache: residency 3,
the count in [2, 3] whose rounds fill best, the fewer on a tie; one unit a CTA where one wave holds
the units (those cells are left out); splits = clamp(ceil(2 x 132 / heads), 1, 16). Stdlib only.
"""
import argparse
import collections
import csv
import math

SMS = 132
RUNS = {
    "s62c3": ["session62_2026-12-07/call3/work/ab_r1", "session62_2026-12-07/call3/work/ab_r2"],
    "s63c1": ["session63_2026-12-07/call1/work/serve_r1", "session63_2026-12-07/call1/work/serve_r2"],
    "s63c1t": ["session63_2026-12-07/call1/work/third_r1", "session63_2026-12-07/call1/work/third_r2"],
    "s63c3": ["session63_2026-12-07/call3/work/capauto_r1", "session63_2026-12-07/call3/work/capauto_r2"],
}


def fill(ctas, per_sm):
    slots = per_sm * SMS
    return ctas / (math.ceil(ctas / slots) * slots)


def per_sm(units, resident=3):
    best, best_fill = resident, fill(units, resident)
    for k in range(resident - 1, (resident + 1) // 2 - 1, -1):
        if fill(units, k) >= best_fill:
            best, best_fill = k, fill(units, k)
    return best


def units_of(shape, batch):
    heads, kv_heads, _ = map(int, shape.split("/"))
    return kv_heads * min(16, max(1, math.ceil(2 * SMS / heads))) * batch


def cells(dirs):
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    for d in dirs:
        with open(d + "/attention_bench.csv") as f:
            for r in csv.DictReader(line for line in f if not line.startswith("#")):
                if r["arm"] == "decode_splitk" and r["kv"] == "bf16" and r["policy"] == "auto+pack":
                    times[(r["shape"], int(r["batch"]), int(r["context"]))][r["kernel"]].append(float(r["us"]))
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threshold", type=int, default=SMS // 2)
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    rows = []
    for run, dirs in RUNS.items():
        for (shape, batch, context), by_kernel in sorted(cells(dirs).items()):
            units = units_of(shape, batch)
            if "24" not in by_kernel or "25" not in by_kernel or units <= 3 * SMS:
                continue
            ctas = min(units, per_sm(units) * SMS)
            last = units - (math.ceil(units / ctas) - 1) * ctas
            ratio = (sum(by_kernel["25"]) / len(by_kernel["25"])) / (sum(by_kernel["24"]) / len(by_kernel["24"]))
            rows.append((run, shape, batch, context, units, ctas, last, ratio))
            if args.list:
                print(run, shape, batch, context, f"units {units} ctas {ctas} last {last} 25/24 {ratio:.3f}")
    for label, keep in (("last <", lambda r: r[6] < args.threshold), ("last >=", lambda r: r[6] >= args.threshold)):
        ratios = [r[7] for r in rows if keep(r)]
        if ratios:
            print(f"{label} {args.threshold}: {len(ratios)} cells, 24 faster in {sum(x > 1.003 for x in ratios)}, "
                  f"slower in {sum(x < 0.997 for x in ratios)}; 25's time over 24's mean {sum(ratios) / len(ratios):.3f} "
                  f"min {min(ratios):.3f} max {max(ratios):.3f}")


if __name__ == "__main__":
    main()
