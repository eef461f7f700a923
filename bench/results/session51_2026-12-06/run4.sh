#!/usr/bin/env bash
# Session 51, call 4 (bundles p51d-bundle = branch wip/sa-bounded-waits with the share's quads only,
# and p51main-bundle = main da40658, lathe and lathe_bench_kernels): bounded-wait ':sa' against
# main's unbounded ':sa', each against LATHE_GEMV_SPLIT_SUM=off in the same process family, on one
# machine. The branch's GPU suites and its `auto:sa` tier tests; Qwen3-8B-FP8 and Qwen3-32B-FP8 steps
# (batch 1, 8, 16, 32) in four arms alternated, three rounds (arms start only under LIMIT seconds);
# `auto` by kernel at 8-32 rows on the 8B / 32B fp8 shapes: the branch on and off, main on (main's
# benchmark does not read the lever); the branch's fp8 table with cuBLASLt FP8.
#   scripts/device-bundle.sh -j 2 --bundle p51d-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
#   (on main) scripts/device-bundle.sh -j 2 --bundle p51main-bundle --targets "lathe lathe_bench_kernels" --xz
#   then p51main-bundle/lib pruned to liblathe_backend_cuda.so (every other library, and lathe
#   itself, byte-identical to p51d-bundle's; the two bundles and the tree must fit 64 MiB)
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p51d-bundle}"
m=$(cd "${MAIN_BUNDLE:-p51main-bundle}" && pwd)
scripts/bundle-unpack.sh "$m" || echo "unpack of $m failed"
echo "main bundle $(cat "$m/COMMIT")" >>$S
export BATCHES=1,8,16,32
decode_suites
gpu_suite gemv_sa gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:sa LATHE_GEMV_TEST_VARIANT_BF16=auto:sa \
  GTEST_FILTER='*EveryRowOfEveryTier*:*SharedSplitSum*'
# main_arm TAG MODEL [VAR=VALUE]: step_arm with main's bundle.
main_arm() {
  (export LD_LIBRARY_PATH="$m/lib:$b/lib:/usr/local/cuda/lib64" ${3:+"$3"}; b=$m; step_arm "$1" "$2" "")
}
for r in 1 2 3; do
  for model in Qwen3-8B-FP8 Qwen3-32B-FP8; do
    step_arm ${model}_sa_r$r $model ""
    main_arm ${model}_main_r$r $model
    (export LATHE_GEMV_SPLIT_SUM=off; step_arm ${model}_off_r$r $model "")
    main_arm ${model}_main_off_r$r $model LATHE_GEMV_SPLIT_SUM=off
  done
done
# `auto` by kernel at 8-32 rows, fp8, 8B and 32B shapes (auto_rows; main's benchmark from its bundle).
for r in 1 2; do
  for model in qwen3-8b qwen3-32b; do
    auto_rows sa_r$r $model 8,16,32
    (export LD_LIBRARY_PATH="$m/lib:$b/lib:/usr/local/cuda/lib64"; b=$m; auto_rows main_r$r $model 8,16,32)
    auto_rows off_r$r $model 8,16,32 LATHE_GEMV_SPLIT_SUM=off
  done
done
fp8_table
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
