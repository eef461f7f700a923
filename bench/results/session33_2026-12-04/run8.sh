#!/usr/bin/env bash
# Session 33, call 8 (perf-bundle at this commit): the QK-norm/RoPE/KV kernel with several heads a
# warp. gpu_cuda_gemv_test (4 shards: the q|k|v GEMV's epilogue byte-equal to this kernel, positions
# past 32k, both caches), then the prefill and decode step of Qwen3-8B-FP8 (two runs) and
# Qwen3-32B-FP8 at batch 1 and 16, and LATHE_PROFILE prefill tables of Qwen3-8B-FP8 at batch 1
# and 16. No older binary fits the carry beside these two: compare with call 7 (803406f).
#   scripts/device-bundle.sh -j 2 --targets "lathe gpu_cuda_gemv_test" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s33c8; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
pids=()
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 300 $b/bin/gpu_cuda_gemv_test >$W/gemv_test.$i.txt 2>&1 &
  pids+=($!)
done
rc=0; for p in "${pids[@]}"; do wait $p || rc=$?; done
echo "gpu_cuda_gemv_test rc=$rc passed $(cat $W/gemv_test.*.txt | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | awk '{n+=$1} END {print n+0}') $((SECONDS - t0))s" >>$S
grep -h -E '^\[  FAILED' $W/gemv_test.*.txt | head -5 >>$S
run() {  # tag, model, batches
  timeout 120 $b/bin/lathe bench latency configs/$2 --load-format dummy --device cuda --batch-sizes $3 \
    --input-len 1024 --output-len 32 >$W/$1.txt 2>$W/$1.log
  printf '%-16s rc=%s %4ss %s\n' $1 $? $((SECONDS - t0)) \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s prefill %s step %s  ", $1, $2, $4}' $W/$1.txt)" >>$S
}
run fp8_r1 Qwen3-8B-FP8 1,16
run fp8_r2 Qwen3-8B-FP8 1,16
run fp8-32b_r1 Qwen3-32B-FP8 1,16
for bs in 1 16; do
  LATHE_PROFILE=1 timeout 100 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
    --batch-sizes $bs --input-len 1024 --output-len 4 >$W/profile_fp8_b$bs.txt 2>&1
  sed -n '/prefill steps/,/^$/p' $W/profile_fp8_b$bs.txt | head -12 >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
