#!/usr/bin/env bash
# Prepared in session 50, not run (no device time left): for branch wip/sa-bounded-waits (':sa' with
# bounded waits; build the bundle with the branch checked out): the GPU suites on the default,
# the GEMV tier tests with `auto:sa` as the fp8 and bf16 kernel under test, and Qwen3-8B-FP8 steps,
# the default against its two-CTA shapes named without ':sa', alternated, two rounds.
#   scripts/device-bundle.sh -j 2 --bundle p50c-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p50c-bundle}"
decode_suites
gpu_suite gemv_sa gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:sa LATHE_GEMV_TEST_VARIANT_BF16=auto:sa \
  GTEST_FILTER='*EveryRowOfEveryTier*:*SharedSplitSum*'
NOSA8="fp8/6144x4096=ring:k5:g16:wg:wgn,fp8/4096x4096=ring:k5:g16:wg:wgn,fp8/4096x12288=ring:k8:g16:wg:wgn"
for r in 1 2; do
  step_arm 8b_sa_r$r Qwen3-8B-FP8 ""
  step_arm 8b_nosa_r$r Qwen3-8B-FP8 "$NOSA8"
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
