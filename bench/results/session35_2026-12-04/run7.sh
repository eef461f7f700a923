#!/usr/bin/env bash
# Session 35, call 7 (perf-bundle at the commit below, with the tokenizer): the served checks
# (scripts/device-perf.sh --steps determinism: Qwen3-8B-FP8's outputs alone = beside 31 others on a
# default server and on a 64-block, 64-token-step server that preempts), gpu_batch_invariance, then
# the end-to-end prefill A/B of call 5 again on the fixed build (LATHE_PREFILL_WS off / on).
#   scripts/device-bundle.sh -j 2 --targets "lathe gpu_batch_invariance" --bundle perf-bundle --with-tokenizer --xz
set -uo pipefail
real_out=$OUT
export OUT=/tmp/s35c7; rm -rf $OUT; mkdir -p $OUT
t0=$SECONDS
scripts/device-perf.sh --steps determinism
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary7.txt
echo "commit $(cat $b/COMMIT); determinism done at $((SECONDS - t0))s" >$S
timeout 90 $b/bin/gpu_batch_invariance >$OUT/batch_invariance.txt 2>&1
echo "gpu_batch_invariance rc=$? $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $OUT/batch_invariance.txt | tr '\n' ' ')" >>$S
ab() {  # tag, ws on/off, model, batches, input length, extra args
  LATHE_PREFILL_WS=$2 timeout 60 $b/bin/lathe bench latency configs/$3 --load-format dummy --device cuda \
    --batch-sizes $4 --input-len $5 --output-len 4 $6 >$OUT/$1.txt 2>$OUT/$1.log
  printf '%-26s rc=%s %4ss %s\n' $1 $? $((SECONDS - t0)) \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s prefill_ms %s  ", $1, $2}' $OUT/$1.txt)" >>$S
}
for ws in off on; do
  ab fp8_ws$ws $ws Qwen3-8B-FP8 1,16 1024 ""
  ab fp8_8k_ws$ws $ws Qwen3-8B-FP8 1 8192 ""
  ab bf16_ws$ws $ws Qwen3-8B 1,16 1000 ""
done
tar -C $OUT -cJf $real_out/all.tar.xz .
cat $OUT/device-perf-summary.txt 2>/dev/null || cat $OUT/summary.txt
cat $S
