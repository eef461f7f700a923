#!/usr/bin/env bash
# Session 61, call 3 (bundle p61-bundle = main 99c5d22). Call 2 found ":wgn" (tiers 1 and 4 as
# warpgroup MMAs; the same sums) 3.5-4 points faster at 1 and 4 rows on the balanced grid's gate|up
# shapes at two CTAs per SM. Here the Qwen3-32B-FP8 decode step (dummy weights, 1k context) with
# gate|up (51200x5120) on main's auto against auto:wgn, alternated, three rounds.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p61-bundle}"
export BATCHES=1,4,8,16
for r in 1 2 3; do
  step_arm 32b_auto_r$r Qwen3-32B-FP8 ""
  step_arm 32b_wgn_r$r Qwen3-32B-FP8 "fp8/51200x5120=auto:wgn"
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
