#!/usr/bin/env bash
# Session 61, calls 1 and 11+ (bundle p61-bundle = main 99c5d22 in call 1; p61e-bundle = main 1a223b9
# after it). Runs only on an H200, the issues' device,
# whose figures are from sessions 48 (attention) and 50 (GEMV). In order, while the elapsed time is
# under LIMIT s (default 480):
#  1. the issue-5 tables under the `h200` declaration (auto slices for both KV dtypes), with
#     "auto:2" measured beside it at batch 1 (session 53's open question: does the H200 want at most
#     2 slices, as the h100 declaration does?) and PyTorch SDPA in the same call;
#  2. the fp8 GEMV table with cuBLASLt FP8 in the same process (issue 4);
#  3. Qwen3-32B-FP8 decode steps, main's `auto` (gate|up on the balanced grid at two CTAs per SM)
#     against gate|up at three (ringbal:b3:wg:xt), alternated, two rounds (session 49 chose two on
#     the H100; the H200 never timed it), and Qwen3-8B-FP8 / Qwen3-8B (BF16) steps;
#  4. gpu_golden_qwen3.
set -uo pipefail
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  echo "not an H200 ($(nvidia-smi --query-gpu=name --format=csv,noheader)): nothing run"
  exit 0
fi
source scripts/bundle-env.sh "${BUNDLE:-p61-bundle}"
LIMIT=${LIMIT:-480}
issue5_tables auto+pack+slicesauto auto+pack+slicesauto --slices auto:8,auto:2
auto2_targets
fp8_table
export BATCHES=1,4,16,32
for r in 1 2; do
  step_arm 32b_auto_r$r Qwen3-32B-FP8 ""
  step_arm 32b_b3xt_r$r Qwen3-32B-FP8 "fp8/51200x5120=ringbal:b3:wg:xt"
done
step_arm 8b_fp8 Qwen3-8B-FP8 ""
step_arm 8b_bf16 Qwen3-8B ""
(( SECONDS - t0 < LIMIT )) && gpu_suite golden gpu_golden_qwen3
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
