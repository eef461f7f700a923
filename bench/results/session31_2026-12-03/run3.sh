# Session 31, call 3 (s31c-bundle, the final GEMV policy: bf16 4096x4096 on 8 K splits):
# gpu_cuda_gemv_test (every tier byte-equal per row to m = 1 on the auto kernels, incl. the
# Qwen3-8B bf16 4096x4096 case) and gpu_batch_invariance (Qwen3-8B and -8B-FP8 shapes, 2 layers).
#   scripts/device-bundle.sh --build build --bundle s31c-bundle --xz --targets "gpu_cuda_gemv_test gpu_batch_invariance"
set -uo pipefail
b=$PWD/s31c-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
for t in gpu_cuda_gemv_test gpu_batch_invariance; do
  timeout 280 $b/bin/$t >$W/$t.txt 2>&1
  echo "$t rc=$? $(grep -c '^\[       OK' $W/$t.txt) ok, $(grep -c '^\[  FAILED' $W/$t.txt) failed lines $((SECONDS - t0))s" >>$S
  grep -h "^\[  PASSED\|^\[  FAILED\|tests ran" $W/$t.txt | tail -4 >>$S
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
