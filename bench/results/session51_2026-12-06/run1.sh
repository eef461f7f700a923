#!/usr/bin/env bash
# Session 51, call 1 (bundle p51-bundle, branch wip/sa-bounded-waits rebased on main da40658): ':sa'
# with bounded waits. The GPU suites on the default; the GEMV tier tests with `auto:sa` as the fp8
# and bf16 kernel under test; decode steps of Qwen3-8B-FP8, Qwen3-8B and Qwen3-32B-FP8 with the
# default against LATHE_GEMV_SPLIT_SUM=off (the same kernels, the last split summing alone),
# alternated, ROUNDS rounds (default 3; arms start only under LIMIT seconds); the fp8 table with
# cuBLASLt FP8 (TABLE=0 skips it); `auto` by kernel at 6-32 rows on the Qwen3-8B / 32B fp8 shapes
# with the shared sum on and off (where ':sa' starts paying), two rounds. Calls 2 and 3 ran it on
# other bundles (run2.sh, run3.sh).
#   scripts/device-bundle.sh -j 2 --bundle p51-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p51-bundle}"
export BATCHES=1,8,16,32
decode_suites
gpu_suite gemv_sa gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:sa LATHE_GEMV_TEST_VARIANT_BF16=auto:sa \
  GTEST_FILTER='*EveryRowOfEveryTier*:*SharedSplitSum*'
for r in $(seq "${ROUNDS:-3}"); do
  for model in Qwen3-8B-FP8 Qwen3-8B Qwen3-32B-FP8; do
    step_arm ${model}_sa_r$r $model ""
    export LATHE_GEMV_SPLIT_SUM=off
    step_arm ${model}_off_r$r $model ""
    unset LATHE_GEMV_SPLIT_SUM
  done
done
[[ ${TABLE:-1} == 0 ]] || fp8_table
for r in 1 2; do
  for sum in on off; do
    for model in qwen3-8b qwen3-32b; do
      auto_rows ${sum}_r$r $model 6,8,12,16,24,32 LATHE_GEMV_SPLIT_SUM=$sum
    done
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
