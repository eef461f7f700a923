#!/usr/bin/env python3
"""PyTorch SDPA decode attention on contiguous (unpaged) BF16 KV: the peer for lathe's paged
decode kernels (bench/attention). Same shapes and method as lathe_bench_attention: q_len 1, GQA
(enable_gqa), launches captured in a CUDA graph rotating over KV copies until a graph reads at
least 512 MB, one warm-up replay, median of 9 replays (cuda_graph_timing.py).
GB/s counts every K and V byte once.

Usage: python3 tools/peers/sdpa_decode.py [--out FILE.csv] [--quick] [--max-bytes GB]
"""
import argparse
import math
import sys

import torch
import torch.nn.functional as F
from cuda_graph_timing import graph_replay_us

SHAPES = [(24, 4, 256), (32, 8, 128), (64, 8, 128)]
ROTATE_BYTES = 512 << 20
MAX_ROTATIONS = 64


def measure(nq, nkv, hd, batch, ctx, budget_bytes):
    kv_bytes = batch * ctx * nkv * hd * 2 * 2
    rotations = max(1, min(MAX_ROTATIONS, math.ceil(ROTATE_BYTES / kv_bytes), budget_bytes // kv_bytes))
    gen = torch.Generator(device="cuda").manual_seed(batch * 7 + ctx)
    qs = [torch.randn(batch, nq, 1, hd, device="cuda", dtype=torch.bfloat16, generator=gen) for _ in range(rotations)]
    ks = [torch.randn(batch, nkv, ctx, hd, device="cuda", dtype=torch.bfloat16, generator=gen) for _ in range(rotations)]
    vs = [torch.randn(batch, nkv, ctx, hd, device="cuda", dtype=torch.bfloat16, generator=gen) for _ in range(rotations)]

    def step():
        return [F.scaled_dot_product_attention(qs[r], ks[r], vs[r], enable_gqa=True) for r in range(rotations)]

    us = graph_replay_us(step, rotations)
    del qs, ks, vs
    torch.cuda.empty_cache()
    return us, kv_bytes / (us * 1e-6) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--max-bytes", type=float, default=40.0, help="GB of KV copies one case may hold")
    args = ap.parse_args()
    batches = [1, 16] if args.quick else [1, 4, 16, 64]
    contexts = [4096, 16384] if args.quick else [1024, 4096, 16384, 65536]
    budget = int(args.max_bytes * 1e9)
    print(f"torch {torch.__version__}, device {torch.cuda.get_device_name()}", flush=True)
    rows = []
    for nq, nkv, hd in SHAPES:
        for batch in batches:
            for ctx in contexts:
                kv_bytes = batch * ctx * nkv * hd * 4
                if kv_bytes > budget:
                    print(f"skip {nq}/{nkv}/{hd} B{batch} L{ctx}: {kv_bytes / 1e9:.1f} GB over --max-bytes", flush=True)
                    continue
                us, gbs = measure(nq, nkv, hd, batch, ctx, budget)
                rows.append((f"{nq}/{nkv}/{hd}", batch, ctx, us, gbs))
                print(f"sdpa {nq}/{nkv}/{hd:<4} B{batch:<3} L{ctx:<6} {us:9.1f} us {gbs:6.0f} GB/s", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("shape,batch,context,us,gbs\n")
            for shape, batch, ctx, us, gbs in rows:
                f.write(f"{shape},{batch},{ctx},{us:.2f},{gbs:.1f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
