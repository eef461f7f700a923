#!/usr/bin/env bash
# Session 61, call 5 (bundle p61-bundle = main 99c5d22). Call 4: in context (after the norm) the
# Qwen3-32B gate|up kernel under auto:wgn is 3.8 us faster at 1 and 4 rows, yet call 3's batch-1
# step was 0.25% longer. At batch 1 the step normalises x inside tier 1 (ffn_fused_norm=1), which
# --after-norm does not time. Here the batch-1 step, {auto, gate|up on auto:wgn} x
# {LATHE_FFN_FUSED_NORM=1 (default), 0}, alternated, two rounds.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p61-bundle}"
export BATCHES=1
for r in 1 2; do
  for fn in 1 0; do
    export LATHE_FFN_FUSED_NORM=$fn
    step_arm 32b_auto_fn${fn}_r$r Qwen3-32B-FP8 ""
    step_arm 32b_wgn_fn${fn}_r$r Qwen3-32B-FP8 "fp8/51200x5120=auto:wgn"
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
