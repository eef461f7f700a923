#!/usr/bin/env python3
"""PyTorch SDPA prefill attention (causal, whole prompts) on contiguous BF16 tensors: the peer for
lathe's paged prefill kernel (bench/attention/prefill_bench.cpp, lathe_bench_prefill_attention).
Same shapes and cells: (num_heads, num_kv_heads, head_dim) in {(32,8,128), (64,8,128),
(24,4,256)}, batch x prompt in {16 x 1024, 4 x 4096, 1 x 16384}; q [batch, heads, prompt, hd], k and
v [batch, kv_heads, prompt, hd], is_causal, GQA through enable_gqa. Each backend PyTorch offers
for the cell (its default choice, then flash, cuDNN and memory-efficient attention pinned) is timed
as two calls captured in a CUDA graph, one warm-up replay, median of 9 replays
(cuda_graph_timing.py, shared with sdpa_decode.py). TFLOP/s counts the
causal work as lathe's benchmark does: 4 * head_dim * num_heads per (row, visible position).

Usage: python3 tools/peers/sdpa_prefill.py [--out FILE.csv] [--cells 16x1024,...] [--shapes 32/8/128,...]
"""
import argparse
import sys

import torch
import torch.nn.functional as F
from cuda_graph_timing import graph_replay_us
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [(32, 8, 128), (64, 8, 128), (24, 4, 256)]
CELLS = [(16, 1024), (4, 4096), (1, 16384)]
BACKENDS = [
    ("default", None),
    ("flash", SDPBackend.FLASH_ATTENTION),
    ("cudnn", SDPBackend.CUDNN_ATTENTION),
    ("efficient", SDPBackend.EFFICIENT_ATTENTION),
]
PER_GRAPH = 2


def causal_flops(nq, hd, batch, prompt):
    return 4.0 * hd * nq * prompt * (prompt + 1) / 2.0 * batch


def time_backend(q, k, v, backend):
    """Median microseconds per call, or None when the backend refuses the inputs."""

    def call():
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)

    def run():
        if backend is None:
            return [call() for _ in range(PER_GRAPH)]
        with sdpa_kernel([backend]):
            return [call() for _ in range(PER_GRAPH)]

    try:
        return graph_replay_us(run, PER_GRAPH)
    except RuntimeError as err:
        print(f"    ({str(err).splitlines()[0][:100]})", file=sys.stderr)
        return None


def parse_pairs(text, sep, what):
    out = []
    for item in text.split(","):
        try:
            out.append(tuple(int(x) for x in item.split(sep)))
        except ValueError:
            sys.exit(f"error: {what}: '{item}' is not a valid entry")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="CSV file to write")
    parser.add_argument("--cells", help="BATCHxPROMPT list, e.g. 16x1024,1x16384")
    parser.add_argument("--shapes", help="num_heads/num_kv_heads/head_dim list")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to measure", file=sys.stderr)
        return 77
    cells = parse_pairs(args.cells, "x", "--cells") if args.cells else CELLS
    shapes = parse_pairs(args.shapes, "/", "--shapes") if args.shapes else SHAPES
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print(f"{'shape':<10} {'batch':>5} {'prompt':>6} {'backend':<10} {'us':>9} {'TFLOP/s':>8}")
    rows = ["shape,batch,prompt,backend,us,tflops"]
    for nq, nkv, hd in shapes:
        for batch, prompt in cells:
            gen = torch.Generator(device="cuda").manual_seed(batch * 7 + prompt)
            q = torch.randn(batch, nq, prompt, hd, device="cuda", dtype=torch.bfloat16, generator=gen)
            k = torch.randn(batch, nkv, prompt, hd, device="cuda", dtype=torch.bfloat16, generator=gen)
            v = torch.randn(batch, nkv, prompt, hd, device="cuda", dtype=torch.bfloat16, generator=gen)
            for name, backend in BACKENDS:
                us = time_backend(q, k, v, backend)
                if us is None:
                    print(f"{nq}/{nkv}/{hd:<5} {batch:>5} {prompt:>6} {name:<10} {'refused':>9}")
                    continue
                tflops = causal_flops(nq, hd, batch, prompt) / (us * 1e-6) / 1e12
                print(f"{nq}/{nkv}/{hd:<5} {batch:>5} {prompt:>6} {name:<10} {us:9.1f} {tflops:8.1f}")
                rows.append(f"{nq}/{nkv}/{hd},{batch},{prompt},{name},{us:.2f},{tflops:.2f}")
            del q, k, v
            torch.cuda.empty_cache()
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
