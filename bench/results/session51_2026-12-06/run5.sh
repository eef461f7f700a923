#!/usr/bin/env bash
# Session 51, call 5 (bundle p52-bundle, 92d9c42; run with ROUNDS=2 ROW_ROUNDS=1 SUITES=short
# BATCHES=6,8,12,16 LIMIT=170): for branch
# wip/sa-wait-by-width (':sa' launches of at most LATHE_GEMV_SPLIT_SUM_NOWAIT_ROWS rows, default 8,
# do not wait: a split that finds the others not all arrived leaves its share to the last). The
# GPU suites and the `auto:sa` tier tests; Qwen3-8B-FP8 and Qwen3-32B-FP8 steps at batch 1 / 6 / 8 /
# 12 / 16 / 32 in three arms (the branch's default; NOWAIT_ROWS=0, main's waits at every width;
# LATHE_GEMV_SPLIT_SUM=off), alternated, ROUNDS rounds (default 3; arms start only under LIMIT
# seconds); `auto` by kernel at 5-16 rows on the 8B / 32B fp8 shapes in the same three arms,
# ROW_ROUNDS rounds (default 2). SUITES=short runs the `auto:sa` tier tests, golden and invariance
# suites only.
#   (on the branch) scripts/device-bundle.sh -j 2 --bundle p52-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p52-bundle}"
export BATCHES=${BATCHES:-1,6,8,12,16,32}
[[ ${SUITES:-} == short ]] || decode_suites
[[ ${SUITES:-} != short ]] || { gpu_suite golden gpu_golden_qwen3; gpu_suite invariance gpu_batch_invariance; }
gpu_suite gemv_sa gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:sa LATHE_GEMV_TEST_VARIANT_BF16=auto:sa \
  GTEST_FILTER='*EveryRowOfEveryTier*:*SharedSplitSum*'
ARMS=("nowait8" "LATHE_GEMV_SPLIT_SUM_NOWAIT_ROWS=0" "LATHE_GEMV_SPLIT_SUM=off")
TAGS=("nowait8" "wait" "off")
for r in $(seq "${ROUNDS:-3}"); do
  for model in Qwen3-8B-FP8 Qwen3-32B-FP8; do
    for i in 0 1 2; do
      (if [[ $i != 0 ]]; then export "${ARMS[$i]}"; fi; step_arm ${model}_${TAGS[$i]}_r$r $model "")
    done
  done
done
for r in $(seq "${ROW_ROUNDS:-2}"); do
  for i in 0 1 2; do
    for model in qwen3-8b qwen3-32b; do
      (if [[ $i != 0 ]]; then export "${ARMS[$i]}"; fi; auto_rows ${TAGS[$i]}_r$r $model 5,8,12,16)
    done
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
