#!/usr/bin/env bash
# Session 42, call 3: the warpgroup-MMA x buffers with the 128-byte swizzle (a warp's x staging
# stores conflict-free), bundle b9551dc (BUNDLE=full-bundle). Two bundles do not fit one call's
# 64 MiB, so the comparison is with call 2's `auto` rows (bundle 067a7e7, the no-swizzle layout,
# another machine perhaps: compare % of each process's read ceiling).
#   scripts/device-bundle.sh -j 2 --bundle full-bundle --xz
# (1) correctness: gpu_cuda_gemv_test (default, and fp8 forced onto wgmma in every tier),
#     gpu_batch_invariance, gpu_golden_qwen3;
# (2) the fp8 kernel table (peers, read ceiling) at 1, 4, 16 and 32 rows, and the variants of call 2
#     on Qwen3-8B gate|up and down;
# (3) Qwen3-8B-FP8 and Qwen3-32B-FP8 decode steps at batch 1..32.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-full-bundle}"
gpu_suite gemv gpu_cuda_gemv_test LATHE_NONE=1
gpu_suite gemv-wg gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:wg:wgn --gtest_filter='*fp8*'
gpu_suite invariance gpu_batch_invariance LATHE_NONE=1
gpu_suite gpu_golden_qwen3 gpu_golden_qwen3 LATHE_NONE=1
timeout 100 $b/bin/lathe_bench_kernels --only qwen3 --widths 1,4,16,32 --dtype fp8 >$W/kernels.txt 2>&1
echo "== kernels rc=$? $((SECONDS - t0))s" >>$S
grep -h "read ceiling" $W/kernels.txt >>$S
grep -hE "^qwen3-(8b|32b) " $W/kernels.txt | grep -E " (gemv|gemv_batch4|gemv_batch16|gemv_batch32|cublaslt fp8) " |
  awk '{print $1, $2, $6, $7, $8, $(NF-2), $NF}' >>$S
V=auto,auto:m2,auto:m4,ring:m4,ring:b3:m2
for shape in qwen3-8b/gate qwen3-8b/down; do
  f=$W/v_${shape//\//_}.txt
  timeout 60 $b/bin/lathe_bench_kernels --variants --variant-list $V --only $shape --dtype fp8 \
    --widths 1,4,16,32 --no-peers >$f 2>&1
  echo "== $shape fp8 variants rc=$? $((SECONDS - t0))s" >>$S
  grep -hE " v:" $f | grep -v "not available" | awk '{print $2, $6, $7, $8, $(NF-1), $NF}' >>$S
done
for m in Qwen3-8B-FP8 Qwen3-32B-FP8; do
  (( SECONDS - t0 > 480 )) && break
  timeout 80 $b/bin/lathe bench latency configs/$m --load-format dummy --device cuda \
    --batch-sizes 1,4,16,24,32 --input-len 1024 --output-len 32 >$W/step_$m.txt 2>$W/step_$m.log
  echo "== step $m rc=$? $((SECONDS - t0))s" >>$S
  grep -vE '^\s*$' $W/step_$m.txt | tail -7 >>$S
done
cat $S
