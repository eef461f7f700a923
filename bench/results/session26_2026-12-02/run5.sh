# Session 26, call 5 (s26d-bundle, the final code): gpu_batch_invariance (a request's logits alone
# = beside others, through the real model with the fused tiers) and gpu_cuda_op_test (every
# kernel, silu_mul included, against the CPU reference).
#   scripts/device-bundle.sh --build build --bundle s26d-bundle --xz \
#     --targets "gpu_batch_invariance gpu_cuda_op_test"
set -uo pipefail
b=$PWD/s26d-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt
echo "bundle $(cat $b/COMMIT)" >$S
for t in gpu_batch_invariance gpu_cuda_op_test; do
  timeout 250 $b/bin/$t >$OUT/$t.log 2>&1
  echo "$t rc=$? $(grep -h '^\[  PASSED  \]\|^\[  FAILED  \]' $OUT/$t.log | head -3)" >>$S
done
cat $S
