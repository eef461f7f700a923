#!/usr/bin/env bash
# Session 33, call 7 (perf-bundle at this commit; 4d1d395's lathe as lathe_prev): the block-128
# activation quantization with 16-byte loads. gpu_cuda_gemm_test (the quantizer against a host
# e4m3 reference on both paths, W8A8 products, row invariance), then the prefill and decode step
# of Qwen3-8B-FP8 (two rounds) and Qwen3-32B-FP8 (one round) at batch 1 and 16, prev and new
# alternated, and the new LATHE_PROFILE prefill table of Qwen3-8B-FP8 at batch 16.
#   scripts/device-bundle.sh -j 2 --targets "lathe gpu_cuda_gemm_test" --bundle perf-bundle --xz \
#       --add lathe_prev=<4d1d395's lathe>
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s33c7; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT); $(cat $b/ADDED)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
timeout 120 $b/bin/gpu_cuda_gemm_test >$W/gemm_test.txt 2>&1
echo "gpu_cuda_gemm_test rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $W/gemm_test.txt | tr '\n' ' ') $((SECONDS - t0))s" >>$S
grep -E '^\[  FAILED' $W/gemm_test.txt | head -5 >>$S
ab() {  # tag, binary, model, batches
  timeout 120 $b/bin/$2 bench latency configs/$3 --load-format dummy --device cuda --batch-sizes $4 \
    --input-len 1024 --output-len 32 >$W/$1.txt 2>$W/$1.log
  printf '%-26s rc=%s %4ss %s\n' $1 $? $((SECONDS - t0)) \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s prefill %s step %s  ", $1, $2, $4}' $W/$1.txt)" >>$S
}
for r in 1 2; do
  for bin in lathe_prev lathe; do ab fp8_${bin}_r$r $bin Qwen3-8B-FP8 1,16; done
done
for bin in lathe_prev lathe; do ab fp8-32b_${bin}_r1 $bin Qwen3-32B-FP8 1,16; done
LATHE_PROFILE=1 timeout 100 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
  --batch-sizes 16 --input-len 1024 --output-len 4 >$W/profile_fp8_b16.txt 2>&1
sed -n '/prefill steps/,/^$/p' $W/profile_fp8_b16.txt | head -20 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
