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
t0=$SECONDS
suite() {  # tag, binary, env...
  local tag=$1 bin=$2
  shift 2
  env LATHE_TEST_DEVICE=cuda "$@" timeout 240 $b/bin/$bin --gtest_brief=1 >$W/$tag.txt 2>&1
  echo "$tag rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $W/$tag.txt | tr '\n' ' ') $((SECONDS - t0))s" >>$S
  grep -E '^\[  FAILED  \]|Failure' $W/$tag.txt | head -10 >>$S
}
suite gemv gpu_cuda_gemv_test LATHE_NONE=1
suite gemv-wg gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:wg:wgn --gtest_filter='*fp8*'
suite invariance gpu_batch_invariance LATHE_NONE=1
suite invariance-batch32 gpu_batch_invariance LATHE_FFN_BATCH32=on
grep -h "gemv_batch32\|x2 halves" $W/invariance-batch32.txt | sort -u | head -4 >>$S
for t in gpu_golden_qwen3 gpu_cuda_op_test gpu_cuda_gemm_test gpu_cuda_fp8_convert_test; do
  suite $t $t LATHE_NONE=1
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
