#!/usr/bin/env bash
# Session 39, prepared for the next session (NOT RUN: no machine was lent after call 3). With one
# shared-library bundle of everything (602d3fa: scripts/device-bundle.sh -j 2 --bundle full-bundle
# --xz, ~25 MB), the final code's GPU suites not run in session 39; then, in the next calls on the
# same bundle, `BUNDLE=full-bundle bash run4.sh` (batch invariance, the lm_head step A/B) and
# `BUNDLE=full-bundle bash run5.sh` (gpu_attention decode shards, the serve table, SDPA, targets).
set -uo pipefail
b=$PWD/${BUNDLE:-full-bundle}
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
for t in gpu_golden_qwen3 gpu_cuda_gemv_test gpu_cuda_op_test gpu_cuda_gemm_test gpu_cuda_fp8_convert_test; do
  LATHE_TEST_DEVICE=cuda timeout 200 $b/bin/$t --gtest_brief=1 >$W/$t.txt 2>&1
  echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $W/$t.txt | tr '\n' ' ') $((SECONDS - t0))s" >>$S
  grep -E '^\[  FAILED  \]|Failure' $W/$t.txt | head -10 >>$S
done
cat $S
