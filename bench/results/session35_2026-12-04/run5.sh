#!/usr/bin/env bash
# Session 35, call 5 (perf-bundle at the commit below: the ws kernel with block ids staged a batch
# ahead): gpu_attention's prefill tests (and racecheck on the head-dim-128 reference cases), the
# kernel benchmark (both kernels, head-dim-128 shapes, one round), then end to end, the same lathe
# binary with LATHE_PREFILL_WS=off (the mma.sync kernel) and on, alternated: Qwen3-8B-FP8 and
# Qwen3-8B at batch 1 and 16 with 1024-token prompts, Qwen3-8B-FP8 at batch 1 with 8192 tokens,
# BF16 and FP8 KV cache.
#   scripts/device-bundle.sh -j 2 --targets "lathe lathe_bench_prefill_attention gpu_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s35c5; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>$S
t0=$SECONDS
timeout 150 $b/bin/gpu_attention --gtest_filter='*Prefill*' >$W/prefill_tests.txt 2>&1
echo "gpu_attention *Prefill* rc=$? $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/prefill_tests.txt | tr '\n' ' ')" >>$S
grep -E '^\[  FAILED  \]|Failure|Expected|Which is' $W/prefill_tests.txt | head -20 >>$S
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 3 $b/bin/gpu_attention \
  --gtest_filter='Shapes/Prefill.MatchesTheReference/*hd128' >$W/prefill_racecheck.txt 2>&1
echo "racecheck rc=$? $((SECONDS - t0))s: $(grep -E 'RACECHECK SUMMARY' $W/prefill_racecheck.txt | tr '\n' ' ')" >>$S
timeout 100 $b/bin/lathe_bench_prefill_attention --shapes 32/8/128,64/8/128 --out $W >$W/bench.txt 2>&1
echo "== bench rc=$? $((SECONDS - t0))s" >>$S
grep -v "gemm pin" $W/bench.txt >>$S
ab() {  # tag, ws on/off, model, batches, input length, extra args
  LATHE_PREFILL_WS=$2 timeout 120 $b/bin/lathe bench latency configs/$3 --load-format dummy --device cuda \
    --batch-sizes $4 --input-len $5 --output-len 4 $6 >$W/$1.txt 2>$W/$1.log
  printf '%-26s rc=%s %4ss %s\n' $1 $? $((SECONDS - t0)) \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s prefill_ms %s  ", $1, $2}' $W/$1.txt)" >>$S
}
for ws in off on; do
  ab fp8_ws$ws $ws Qwen3-8B-FP8 1,16 1024 ""
  ab bf16_ws$ws $ws Qwen3-8B 1,16 1024 ""
  ab fp8_8k_ws$ws $ws Qwen3-8B-FP8 1 8192 ""
  ab fp8_8k_fp8kv_ws$ws $ws Qwen3-8B-FP8 1 8192 "--kv-cache-dtype fp8"
done
grep -h "prefill attention" $W/*.log | sort | uniq -c >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
