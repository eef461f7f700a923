#!/usr/bin/env bash
# Session 36, call 6 (perf-bundle at the commit below: the session's final kernels). End to end, the
# same lathe at --block-size 16 and 64 (the new default), prefill and decode steps; then synccheck
# and racecheck on the head-dim-128 prefill reference cases (the ws kernel with setmaxnreg and Q in
# registers).
#   scripts/device-bundle.sh -j 2 --targets "lathe gpu_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s36c6; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
lat() {  # tag, model, batches, input length, extra args
  timeout 60 $b/bin/lathe bench latency configs/$2 --load-format dummy --device cuda \
    --batch-sizes $3 --input-len $4 --output-len 32 $5 >$W/$1.txt 2>$W/$1.log
  printf '%-22s rc=%s %4ss %s\n' $1 $? $((SECONDS - t0)) \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s prefill_ms %s step_p50 %s x_floor %s | ", $1, $2, $4, $10}' $W/$1.txt)" >>$S
}
for bs in 16 64; do
  lat fp8_bs$bs Qwen3-8B-FP8 1,16 1024 "--block-size $bs"
  lat fp8_8k_bs$bs Qwen3-8B-FP8 1 8192 "--block-size $bs"
  lat fp8kv_8k_bs$bs Qwen3-8B-FP8 1 8192 "--block-size $bs --kv-cache-dtype fp8"
  lat bf16_bs$bs Qwen3-8B 1,16 1024 "--block-size $bs"
done
grep -h "read ceiling" $W/fp8_bs16.txt | head -1 >>$S
for tool in synccheck racecheck; do
  timeout 70 compute-sanitizer --tool $tool --error-exitcode 3 $b/bin/gpu_attention \
    --gtest_filter='Shapes/Prefill.MatchesTheReference/*hd128' >$W/prefill_$tool.txt 2>&1
  echo "$tool rc=$? $((SECONDS - t0))s: $(grep -E 'SUMMARY' $W/prefill_$tool.txt | tr '\n' ' ')" >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
