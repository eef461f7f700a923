#!/usr/bin/env bash
# For the next call, on an H200 (no H200 started in session 49): main's `auto` after session 49
# (799fda2: `ringbal:wg:xt` for fp8 decoder-layer shapes on the balanced grid, `ringbal:b3:wg:xt`
# for fp8 vocabulary projections, `:wgn` / `:wg` on the two-CTA fp8 ring) validated and timed:
# (1) the GPU suites; (2) the fp8 decode-width table with cuBLASLt FP8 in the same process; (3) the
# balanced fp8 gate|up shapes at 1/4/16/32 rows under auto, `ringbal:b3:wg:xt` and session 48's
# `ringbal:b3:wg`; (4) Qwen3-32B-FP8 steps with gate|up on each of the three, alternated, and one
# Qwen3-8B-FP8 step (the batch-1 floor ratio). Arms start only under LIMIT seconds (default 400).
#   scripts/device-bundle.sh -j 2 --bundle p49c-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p49c-bundle}"
decode_suites
fp8_table
for shape in qwen3-32b/gate_up qwen3.5-27b/gate_up; do
  variant_rows $shape auto,ringbal:b3:wg:xt,ringbal:b3:wg 1,4,16,32
done
step_arm 8b_new Qwen3-8B-FP8 ""
for r in 1 2 3; do
  step_arm 32b_new_r$r Qwen3-32B-FP8 ""
  step_arm 32b_b3xt_r$r Qwen3-32B-FP8 "fp8/51200x5120=ringbal:b3:wg:xt"
  step_arm 32b_b3_r$r Qwen3-32B-FP8 "fp8/51200x5120=ringbal:b3:wg"
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
