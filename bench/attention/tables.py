#!/usr/bin/env python3
"""Markdown tables from lathe_bench_attention CSVs (and tools/peers/sdpa_decode.py's CSV).

Usage: tables.py --kernels KERNELS_CSV --policies POLICIES_CSV [--sdpa SDPA_CSV] [--default K]

KERNELS_CSV: a run with --kernels LIST --policies auto+pack (one auto+pack column per split-K
kernel variant). POLICIES_CSV: a run over every policy under one kernel variant. Each CSV's
percentages are against the read ceiling that run measured (its `# read ceiling` header line); the
SDPA column uses the KERNELS_CSV ceiling. Prints one table per (shape, KV dtype), then the
auto+pack (default kernel) / SDPA time ratios.
"""
import argparse
import csv
import re


def load(path):
    ceiling = None
    rows = []
    with open(path) as f:
        lines = []
        for line in f:
            if line.startswith("#"):
                m = re.search(r"read ceiling: (\d+)", line)
                if m:
                    ceiling = float(m.group(1))
            else:
                lines.append(line)
    for r in csv.DictReader(lines):
        rows.append(r)
    return ceiling, rows


def cell(gbs, ceiling):
    return f"{gbs:.0f} ({100 * gbs / ceiling:.0f}%)"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--policies", required=True)
    ap.add_argument("--sdpa")
    ap.add_argument("--default", default="5")
    ap.add_argument("--show", default="0,1,6,8,9", help="other kernel variants to show")
    args = ap.parse_args()
    kc, krows = load(args.kernels)
    pc, prows = load(args.policies)
    sdpa = {}
    if args.sdpa:
        with open(args.sdpa) as f:
            for r in csv.DictReader(f):
                sdpa[(r["shape"], int(r["batch"]), int(r["context"]))] = (float(r["us"]), float(r["gbs"]))
    kern = {}
    for r in krows:
        kern[(r["shape"], r["kv"], int(r["batch"]), int(r["context"]), r["kernel"])] = r
    pol = {}
    for r in prows:
        pol[(r["shape"], r["kv"], int(r["batch"]), int(r["context"]), r["policy"])] = r
    shapes = list(dict.fromkeys(r["shape"] for r in krows))
    dtypes = list(dict.fromkeys(r["kv"] for r in krows))
    show = [k for k in args.show.split(",") if k and k != args.default]
    pol_cols = ["legacy", "auto", "pinned1", "pinned1+pack", "pinned4+pack", "pinned16+pack"]
    pkernel = next((r["kernel"] for r in prows if r["arm"] == "decode_splitk"), "?")
    for kv in dtypes:
        for shape in shapes:
            print(f"#### {shape} (num_heads/num_kv_heads/head_dim), {kv.upper()} KV: GB/s of KV read (% of ceiling)\n")
            head = [f"auto+pack k{args.default} (default)"] + [f"auto+pack k{k}" for k in show]
            head += [c + (f" k{pkernel}" if c not in ("legacy", "pinned1", "pinned1+pack") else "") for c in pol_cols]
            sd = kv == "bf16" and sdpa
            if sd:
                head += ["SDPA (contiguous)"]
            head += [f"k{args.default} µs"] + (["SDPA µs"] if sd else [])
            print("| B | L | " + " | ".join(head) + " |")
            print("|---" * (len(head) + 2) + "|")
            keys = sorted({(int(r["batch"]), int(r["context"])) for r in krows if r["shape"] == shape and r["kv"] == kv})
            for b, l in keys:
                out = []
                d = kern.get((shape, kv, b, l, args.default))
                out.append(cell(float(d["gbs"]), kc) if d else "-")
                for k in show:
                    r = kern.get((shape, kv, b, l, k))
                    out.append(cell(float(r["gbs"]), kc) if r else "-")
                for c in pol_cols:
                    r = pol.get((shape, kv, b, l, c))
                    if not r:
                        out.append("-")
                        continue
                    txt = cell(float(r["gbs"]), pc)
                    if r["arm"] == "decode_splitk":
                        txt += f" s{r['splits']}"
                    out.append(txt)
                s = sdpa.get((shape, b, l)) if sd else None
                if sd:
                    out.append(cell(s[1], kc) if s else "-")
                out.append(f"{float(d['us']):.1f}" if d else "-")
                if sd:
                    out.append(f"{s[0]:.1f}" if s else "-")
                lab = f"{l // 1024}k"
                print(f"| {b} | {lab} | " + " | ".join(out) + " |")
            print()
    if sdpa:
        print(f"#### Summary (BF16): auto+pack k{args.default} against SDPA, SDPA µs / ours µs (> 1: we are faster)\n")
        contexts = sorted({int(r["context"]) for r in krows})
        print("| shape | B | " + " | ".join(f"{c // 1024}k" for c in contexts) + " |")
        print("|---|---|" + "---|" * len(contexts))
        for shape in shapes:
            for b in sorted({int(r["batch"]) for r in krows}):
                vals = []
                for c in contexts:
                    d = kern.get((shape, "bf16", b, c, args.default))
                    s = sdpa.get((shape, b, c))
                    vals.append(f"{s[0] / float(d['us']):.2f}" if d and s else "-")
                print(f"| {shape} | {b} | " + " | ".join(vals) + " |")
        print()


if __name__ == "__main__":
    main()
