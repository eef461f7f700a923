#!/usr/bin/env bash
# Session 50, call 5 (bundle p50-bundle = b32500d), on the H200 if lent: the fp8 table; the two-CTA
# fp8 shapes at 8/16/32 rows under auto and auto:sa; Qwen3-32B-FP8 steps: main, ':sa' on its
# two-CTA shapes, and gate|up on three CTAs per SM (ringbal:b3:wg:xt, session 49's question for the
# H200), alternated, two rounds. Arms start only under LIMIT seconds.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p50-bundle}"
fp8_table
for shape in qwen3-8b/q/o qwen3-8b/qkv qwen3-8b/down qwen3-32b/qkv qwen3-32b/o_proj qwen3-32b/down; do
  variant_rows $shape auto,auto:sa 8,16,32
done
SA32="fp8/10240x5120=auto:sa,fp8/5120x8192=auto:sa,fp8/5120x25600=auto:sa"
for r in 1 2; do
  step_arm 32b_main_r$r Qwen3-32B-FP8 ""
  step_arm 32b_sa_r$r Qwen3-32B-FP8 "$SA32"
  step_arm 32b_b3xt_r$r Qwen3-32B-FP8 "fp8/51200x5120=ringbal:b3:wg:xt"
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
