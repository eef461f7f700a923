# Session 21, call 4 (main's final code, 7a184c1's kernels): the kernel A/B 14 -> 22 (the wide
# default) for BF16 KV in one process, chained as a serve launches, with the PyTorch SDPA peer on
# contiguous KV in the same call.
set -uo pipefail
ATTN_BENCH_ARGS="--kernels 14,22 --policies auto+pack --batches 4,16,64 --dtypes bf16" \
  bash scripts/device-perf.sh --steps attnbench
cat $OUT/device-perf-summary.txt | tail -5
