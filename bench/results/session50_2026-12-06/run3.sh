#!/usr/bin/env bash
# Session 50, call 3 (bundle p50-bundle = b32500d): ':sa', every K split of a register-ring row block
# summing its share of the rows (16- and 32-row tiers, two CTAs per SM). (1) the GPU suites, and the
# GEMV suite's tier tests again with ':sa' on the fp8 default route; (2) the two-CTA fp8 shapes at
# 8/16/32 rows under auto and auto:sa; (3) Qwen3-8B-FP8 and Qwen3-32B-FP8 steps with ':sa' on their
# two-CTA shapes against the default, alternated, two rounds. Arms start only under LIMIT seconds.
#   scripts/device-bundle.sh -j 2 --bundle p50-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p50-bundle}"
decode_suites
gpu_suite gemv_sa gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:sa GTEST_FILTER='*EveryRowOfEveryTier*'
for shape in qwen3-8b/q/o qwen3-8b/qkv qwen3-8b/down qwen3-32b/qkv qwen3-32b/o_proj qwen3-32b/down; do
  variant_rows $shape auto,auto:sa 8,16,32
done
SA8="fp8/6144x4096=auto:sa,fp8/4096x4096=auto:sa,fp8/4096x12288=auto:sa"
SA32="fp8/10240x5120=auto:sa,fp8/5120x8192=auto:sa,fp8/5120x25600=auto:sa"
for r in 1 2; do
  step_arm 8b_main_r$r Qwen3-8B-FP8 ""
  step_arm 8b_sa_r$r Qwen3-8B-FP8 "$SA8"
  step_arm 32b_main_r$r Qwen3-32B-FP8 ""
  step_arm 32b_sa_r$r Qwen3-32B-FP8 "$SA32"
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
