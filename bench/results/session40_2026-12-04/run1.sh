#!/usr/bin/env bash
# Session 40, prepared for the next session with a device (NOT RUN: no machine was lent in session
# 40). Correctness first, on one shared-library bundle of everything:
#   scripts/device-bundle.sh -j 2 --bundle full-bundle --xz
# (1) the GPU suites not run on main since session 38 (session 39's run6.sh list), with
# gpu_cuda_gemv_test now covering the 32-row tier: every row of the tier and of the
# LATHE_FFN_BATCH32 route byte-equal to m = 1, and the tier running exactly on the plain-ring
# shapes; (2) again with every fp8 shape forced onto the warpgroup MMA (auto:wg:wgn: the n32 form
# on the two-CTA shapes too); (3) gpu_batch_invariance with the lever off and on.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-full-bundle}"
gpu_suite gemv gpu_cuda_gemv_test LATHE_NONE=1
gpu_suite gemv-wg gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:wg:wgn --gtest_filter='*fp8*'
gpu_suite invariance gpu_batch_invariance LATHE_NONE=1
gpu_suite invariance-batch32 gpu_batch_invariance LATHE_FFN_BATCH32=on
grep -h "gemv_batch32\|x2 halves" $W/invariance-batch32.txt | sort -u | head -4 >>$S
for t in gpu_golden_qwen3 gpu_cuda_op_test gpu_cuda_gemm_test gpu_cuda_fp8_convert_test; do
  gpu_suite $t $t LATHE_NONE=1
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
