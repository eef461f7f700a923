#!/usr/bin/env bash
# Session 33, call 4 (perf-bundle at this commit): the kernel suites of the changed kernels,
# scripts/device-perf.sh --steps golden (4 shards each): gpu_cuda_gemv_test (the q|k|v GEMV's
# QK-norm/RoPE/KV epilogue and the gate|up GEMV's SwiGLU epilogue byte-equal to the standalone
# kernels, positions past 32k), gpu_cuda_op_test (every op against the CPU reference, the SwiGLU's
# vector and scalar paths), gpu_cuda_gemm_test (row invariance, the prefill pin at 1024).
#   scripts/device-bundle.sh -j 2 --targets "gpu_cuda_gemv_test gpu_cuda_op_test gpu_cuda_gemm_test" \
#       --bundle perf-bundle --xz
set -uo pipefail
real_out=$OUT
export OUT=/tmp/s33c4; rm -rf $OUT; mkdir -p $OUT
scripts/device-perf.sh --steps golden
tar -C $OUT -cJf $real_out/all.tar.xz .
cp $OUT/summary.txt $real_out/summary.txt
cat $OUT/summary.txt
