# Session 26, call 4 (s26d-bundle, the final code): gpu_cuda_gemv_test (GemvSiluTest first, then
# the rest), gpu_batch_invariance (a request's logits alone = beside others, through the real model
# with the fused tiers) and gpu_cuda_op_test (every kernel, silu_mul included, against the CPU
# reference).
#   scripts/device-bundle.sh --build build --bundle s26d-bundle --xz \
#     --targets "gpu_batch_invariance gpu_cuda_op_test gpu_cuda_gemv_test"
set -uo pipefail
b=$PWD/s26d-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt
echo "bundle $(cat $b/COMMIT)" >$S
timeout 120 $b/bin/gpu_cuda_gemv_test --gtest_filter='*Silu*' >$OUT/gemv_silu.log 2>&1
echo "gemv silu rc=$? $(grep -h '^\[  PASSED  \]\|^\[  FAILED  \]' $OUT/gemv_silu.log | head -3)" >>$S
grep -h "Failure\|FAILED \]" $OUT/gemv_silu.log | head -5 >>$S
timeout 200 $b/bin/gpu_cuda_gemv_test --gtest_filter='-*Silu*' >$OUT/gemv_rest.log 2>&1
echo "gemv rest rc=$? $(grep -h '^\[  PASSED  \]\|^\[  FAILED  \]' $OUT/gemv_rest.log | head -3)" >>$S
for t in gpu_batch_invariance gpu_cuda_op_test; do
  timeout 200 $b/bin/$t >$OUT/$t.log 2>&1
  echo "$t rc=$? $(grep -h '^\[  PASSED  \]\|^\[  FAILED  \]' $OUT/$t.log | head -3)" >>$S
done
cat $S
