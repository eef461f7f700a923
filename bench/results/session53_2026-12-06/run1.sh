#!/usr/bin/env bash
# Session 53, call 1 (bundle p53-bundle = main 370203e: session 52's code plus the GEMV test's
# restore-on-exit): (1) batch-1 split slices swept over the split's length: the three serve
# geometries, both KV dtypes, contexts 2k-64k, 1/2/3/4/6 slices with the slice floor lowered to 64
# positions (LATHE_ATTN_MIN_KV_PER_SLICE) so every pinned count is used as asked, two processes;
# (2) the decode suites (the GEMV test's restore-on-exit runs here first); (3) the fp8 table with
# cuBLASLt FP8 and the decode steps (H200 only: session 52 ran them on an H100); (4) on an H200 only, the issue-5 targets tables (serve kernels
# under auto+pack and auto+pack+slices, SDPA in the same call).
#   scripts/device-bundle.sh -j 2 --bundle p53-bundle --targets "lathe gpu_attention lathe_bench_kernels lathe_bench_attention gpu_golden_qwen3 gpu_batch_invariance gpu_cuda_gemv_test gpu_cuda_op_test" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p53-bundle}"
slice_sweep  # the batch-1 slice sweep (scripts/bundle-env.sh)
decode_suites
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && h200=1 || h200=0
if (( h200 )); then
  fp8_table
  export BATCHES=1,4,8,16,32
  for model in Qwen3-8B-FP8 Qwen3-32B-FP8 Qwen3-8B; do step_arm $model $model ""; done
fi
if (( h200 )) && (( SECONDS - t0 < 300 )); then
  issue5_tables auto+pack+slices auto+pack+slices  # scripts/bundle-env.sh
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
