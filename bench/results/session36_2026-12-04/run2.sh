#!/usr/bin/env bash
# Session 36, call 2 (perf-bundle at the commit below: the ws kernel templated on its box, whole
# 64-position tiles where the block size is a multiple of 64, else main's 16-position boxes).
# gpu_attention's prefill tests; the prefill benchmark at block sizes 16 and 64; end to end, the same
# lathe with --block-size 16 and 64 (prefill and decode steps; does the decode path care?).
#   scripts/device-bundle.sh -j 2 --targets "lathe gpu_attention lathe_bench_prefill_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s36c2; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
timeout 100 $b/bin/gpu_attention --gtest_filter='*Prefill*' >$W/attention.txt 2>&1
echo "gpu_attention *Prefill* rc=$? $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/attention.txt | tr '\n' ' ')" >>$S
grep -E '^\[  FAILED  \]|Failure|Expected|Which is' $W/attention.txt | head -12 >>$S
for bs in 16 64; do
  timeout 60 $b/bin/lathe_bench_prefill_attention --shapes 32/8/128,64/8/128 --block-size $bs >$W/bench_bs$bs.txt 2>&1
  echo "== bench bs=$bs rc=$? $((SECONDS - t0))s" >>$S
  grep -v "gemm pin" $W/bench_bs$bs.txt >>$S
done
lat() {  # tag, model, batches, input length, extra args
  timeout 75 $b/bin/lathe bench latency configs/$2 --load-format dummy --device cuda \
    --batch-sizes $3 --input-len $4 --output-len 32 $5 >$W/$1.txt 2>$W/$1.log
  printf '%-22s rc=%s %4ss %s\n' $1 $? $((SECONDS - t0)) \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s prefill_ms %s step_p50 %s x_floor %s | ", $1, $2, $4, $10}' $W/$1.txt)" >>$S
}
for round in 1 2; do
  for bs in 16 64; do
    lat fp8_bs${bs}_r$round Qwen3-8B-FP8 1,16 1024 "--block-size $bs"
  done
done
for bs in 16 64; do
  lat fp8_8k_bs$bs Qwen3-8B-FP8 1 8192 "--block-size $bs"
  lat fp8kv_8k_bs$bs Qwen3-8B-FP8 1 8192 "--block-size $bs --kv-cache-dtype fp8"
  lat bf16_bs$bs Qwen3-8B 1,16 1024 "--block-size $bs"
done
grep -h "read ceiling\|ceiling" $W/fp8_bs16_r1.txt | head -2 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
