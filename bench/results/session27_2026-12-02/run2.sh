# Session 27, call 2 (s27b-bundle: the QK-norm/RoPE/KV write in the q|k|v GEMV's epilogue):
# gpu_cuda_gemv_test (the new GemvRopeTest first, then the rest: the kernel template changed), then
# decode steps with LATHE_QKV_FUSED_ROPE=off (the separate kernel) against the default (fused),
# alternated, same binary: Qwen3-8B-FP8 batch 1/4/16 at 1k (three rounds) and batch 1 at 16k
# (two rounds; session 16's form of this fusion was +11% there), Qwen3-8B BF16 batch 1/16,
# Qwen3-32B-FP8 batch 1/4.
#   scripts/device-bundle.sh --build build --bundle s27b-bundle --xz --targets "lathe gpu_cuda_gemv_test"
set -uo pipefail
b=$PWD/s27b-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
timeout 150 $b/bin/gpu_cuda_gemv_test --gtest_filter='*Rope*' >$OUT/gemv_rope.log 2>&1
echo "gemv rope rc=$? $(grep -h '^\[  PASSED  \]\|^\[  FAILED  \]' $OUT/gemv_rope.log | head -3)" >>$S
grep -h "Failure\|FAILED \]" -A3 $OUT/gemv_rope.log | head -20 >>$S
timeout 240 $b/bin/gpu_cuda_gemv_test --gtest_filter='-*Rope*' >$OUT/gemv_rest.log 2>&1
echo "gemv rest rc=$? $(grep -h '^\[  PASSED  \]\|^\[  FAILED  \]' $OUT/gemv_rest.log | head -3)" >>$S
grep -h "FAILED \]" $OUT/gemv_rest.log | head -10 >>$S
t0=$SECONDS
step() {  # tag, model, batches, input len, env...
  local tag=$1 model=$2 batches=$3 len=$4; shift 4
  env "$@" timeout 150 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len $len --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-24s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2 3; do
  step 8B-FP8_off_r$r Qwen3-8B-FP8 1,4,16 1024 LATHE_QKV_FUSED_ROPE=off
  step 8B-FP8_rope_r$r Qwen3-8B-FP8 1,4,16 1024
done
for r in 1 2; do
  step 8B-FP8-16k_off_r$r Qwen3-8B-FP8 1 16384 LATHE_QKV_FUSED_ROPE=off
  step 8B-FP8-16k_rope_r$r Qwen3-8B-FP8 1 16384
done
for r in 1 2; do
  step 8B-BF16_off_r$r Qwen3-8B 1,16 1024 LATHE_QKV_FUSED_ROPE=off
  step 8B-BF16_rope_r$r Qwen3-8B 1,16 1024
done
step 32B-FP8_off Qwen3-32B-FP8 1,4 1024 LATHE_QKV_FUSED_ROPE=off
step 32B-FP8_rope Qwen3-32B-FP8 1,4 1024
grep -h "fused_rope\|QK-norm, RoPE" $W/s_8B-FP8_rope_r1.log | head -3 >>$S
grep -h "qkv_fused_rope" $W/s_8B-FP8_off_r1.log | head -1 | cut -c1-300 >>$S
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
