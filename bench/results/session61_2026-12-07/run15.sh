#!/usr/bin/env bash
# Session 61, call 15 (bundle p61e-bundle = main 1a223b9). Call 14: under Nsight Compute one cold
# launch of Qwen3-32B down takes the same time at 8 and 16 rows (55.97 / 55.07 us), while back to
# back the 16-row launch is 3 us longer (49.0 -> 52.0 us). The one switch between those widths is
# the ":sa" wait (no wait up to LATHE_GEMV_SPLIT_SUM_NOWAIT_ROWS = 8, session 51). Here the two-CTA
# ring's fp8 shapes at 12 and 16 rows with that lever at 8 (default), 16, and the shared sum off,
# one process each, two rounds; then the decode steps at batch 12 and 16 of Qwen3-8B-FP8 and
# Qwen3-32B-FP8 under the three, alternated, two rounds.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p61e-bundle}"
for r in 1 2; do
  auto_rows nw8_r$r qwen3-8b 12,16
  auto_rows nw16_r$r qwen3-8b 12,16 LATHE_GEMV_SPLIT_SUM_NOWAIT_ROWS=16
  auto_rows off_r$r qwen3-8b 12,16 LATHE_GEMV_SPLIT_SUM=off
  auto_rows nw8_r$r qwen3-32b 12,16
  auto_rows nw16_r$r qwen3-32b 12,16 LATHE_GEMV_SPLIT_SUM_NOWAIT_ROWS=16
  auto_rows off_r$r qwen3-32b 12,16 LATHE_GEMV_SPLIT_SUM=off
done
export BATCHES=12,16
for r in 1 2; do
  for model in Qwen3-8B-FP8 Qwen3-32B-FP8; do
    step_arm ${model}_nw8_r$r $model ""
    LATHE_GEMV_SPLIT_SUM_NOWAIT_ROWS=16 step_arm ${model}_nw16_r$r $model ""
    LATHE_GEMV_SPLIT_SUM=off step_arm ${model}_off_r$r $model ""
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
