#!/usr/bin/env bash
# Session 44, call 10 (H100): the swizzled x buffers without the `:f<N>` change (4475e7f): the code that lands.
# (1) in one process per shape, `auto` against `auto:wg` (mma.sync's x layout is untouched, so its
# rows are the control against calls 1, 3, 7 and 9), two rounds, fp8, 1 / 4 / 16 rows; (2) the fp8
# table with cuBLASLt FP8 in the same process; (3) gpu_cuda_gemv_test as the default and with fp8
# on the warpgroup MMA in every tier, gpu_batch_invariance, gpu_golden_qwen3.
#   scripts/device-bundle.sh -j 2 --bundle sw2-bundle --targets "gpu_cuda_gemv_test lathe_bench_kernels gpu_batch_invariance gpu_golden_qwen3" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-sw2-bundle}"
for r in 1 2; do
  for shape in qwen3-8b/down qwen3-8b/gate qwen3-32b/q_proj qwen3-8b/qkv qwen3-32b/o_proj qwen3-32b/gate; do
    f=$W/ab_r${r}_${shape//\//_}.txt
    timeout 60 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:wg \
      --only $shape --dtype fp8 --widths 1,4,16 --no-peers >$f 2>&1
    echo "== r$r $shape rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $f | cut -c1-40)" >>$S
    grep -hE " v:" $f | awk '{print $2, $6, $7, $8, $(NF-1), $NF}' >>$S
  done
done
timeout 100 $b/bin/lathe_bench_kernels --only qwen3- --widths 1,4,16,32 --dtype fp8 >$W/table_fp8.txt 2>&1
echo "table fp8 rc=$? $((SECONDS - t0))s" >>$S
gpu_suite gemv gpu_cuda_gemv_test LATHE_NONE=1
gpu_suite gemv-wg gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:wg:wgn
gpu_suite invariance gpu_batch_invariance LATHE_NONE=1
gpu_suite golden gpu_golden_qwen3 LATHE_NONE=1
tar -C $W -cJf $OUT/work.tar.xz .
cp $W/table_fp8.txt $OUT/
cat $S
