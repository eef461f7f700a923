#!/usr/bin/env bash
# Session 45, call 1: fp8 weights stored with K permuted inside 64-k blocks (fp8_weight_layout.h), x
# staged in natural order (16-byte copies into the warpgroup-MMA layout, ldmatrix fragments in the
# mma.sync tiers). (1) the GPU suites that cover every fp8 weight consumer: the GEMV tiers (default
# and fp8 on the warpgroup MMA in every tier), the cuBLASLt GEMMs with the activation quantizers and
# the dequantisation, the op harness (CUDA against the CPU backend), batch invariance, the golden
# fixtures; (2) `auto` against `auto:wg` per shape at 1 / 4 / 16 rows; (3) the fp8 table with
# cuBLASLt FP8 in the same process.
#   scripts/device-bundle.sh -j 2 --bundle p45-bundle --targets "gpu_cuda_gemv_test gpu_cuda_gemm_test gpu_cuda_op_test lathe_bench_kernels gpu_batch_invariance gpu_golden_qwen3" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p45-bundle}"
gpu_suite gemv gpu_cuda_gemv_test LATHE_NONE=1
gpu_suite gemv-wg gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:wg:wgn
gpu_suite gemm gpu_cuda_gemm_test LATHE_NONE=1
gpu_suite op gpu_cuda_op_test LATHE_NONE=1
gpu_suite invariance gpu_batch_invariance LATHE_NONE=1
gpu_suite golden gpu_golden_qwen3 LATHE_NONE=1
for shape in qwen3-8b/down qwen3-8b/gate qwen3-32b/q_proj qwen3-8b/qkv qwen3-32b/o_proj qwen3-32b/gate; do
  f=$W/ab_${shape//\//_}.txt
  timeout 60 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:wg \
    --only $shape --dtype fp8 --widths 1,4,16 --no-peers >$f 2>&1
  echo "== $shape rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $f | cut -c1-40)" >>$S
  grep -hE " v:" $f | awk '{print $2, $6, $7, $8, $(NF-1), $NF}' >>$S
done
if ((SECONDS - t0 < 420)); then
  timeout 100 $b/bin/lathe_bench_kernels --only qwen3- --widths 1,4,16,32 --dtype fp8 >$W/table_fp8.txt 2>&1
  echo "table fp8 rc=$? $((SECONDS - t0))s" >>$S
  cp $W/table_fp8.txt $OUT/
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
