#!/usr/bin/env bash
# Session 44, call 7 (H100): a shorter first x group per K segment (GemvVariant::first_group_steps,
# ":f2"), which stages 2 steps of x after the chained-launch wait instead of 4 before a segment's
# first MMA. (1) A/B in one process per shape, alternated, two rounds: auto / auto:f2 / auto:wg /
# auto:wg:f2 at 1, 4, 16 rows; (2) gpu_cuda_gemv_test as the default (the default's group arithmetic
# changed form) and with ":f2" as the kernel under test, gpu_batch_invariance.
#   scripts/device-bundle.sh -j 2 --bundle gemv-bundle --targets "gpu_cuda_gemv_test lathe_bench_kernels gpu_batch_invariance" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-gemv-bundle}"
for r in 1 2; do
  for shape in qwen3-8b/down qwen3-8b/gate qwen3-8b/qkv qwen3-32b/q_proj qwen3-32b/gate qwen3-32b/down; do
    f=$W/ab_r${r}_${shape//\//_}.txt
    timeout 60 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:f2,auto:wg,auto:wg:f2 \
      --only $shape --dtype fp8 --widths 1,4,16 --no-peers >$f 2>&1
    echo "== r$r $shape rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $f | cut -c1-40)" >>$S
    grep -hE " v:" $f | awk '{print $2, $6, $7, $8, $(NF-1), $NF}' >>$S
  done
done
gpu_suite gemv gpu_cuda_gemv_test
gpu_suite gemv-f2 gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:wg:f2 LATHE_GEMV_TEST_VARIANT_BF16=auto:f2
gpu_suite invariance gpu_batch_invariance
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
