#!/usr/bin/env bash
# Session 61, call 7 (bundle p61b-bundle = the ":wgnu" change on main). The decode-path suites (the
# GEMV tiers with the fused-norm, SwiGLU and QK-norm/RoPE forms, the CUDA ops, batch invariance, the
# golden outputs), the fp8 GEMV table with cuBLASLt FP8 in the same process, and Qwen3-32B-FP8 decode
# steps under the new auto against gate|up pinned to the former auto (ringbal:wg:xt, the same
# binary), alternated, two rounds, while the elapsed time is under LIMIT s (default 420).
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p61b-bundle}"
LIMIT=${LIMIT:-420}
fp8_table
export BATCHES=1,4,8,16,32
for r in 1 2; do
  step_arm 32b_new_r$r Qwen3-32B-FP8 ""
  step_arm 32b_old_r$r Qwen3-32B-FP8 "fp8/51200x5120=ringbal:wg:xt"
done
SUITE_TIMEOUT=200 decode_suites
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
