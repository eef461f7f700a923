#!/usr/bin/env bash
# Session 37, call 1 (perf-bundle at 850e514, main at the session's start): the first GPU run of
# 2aefcd7 (the ws prefill kernel gated on its register count), then the decode attention baseline
# at the serve's new default block size (64) beside 16, a split-count sweep at batch 16, and SDPA.
#   scripts/device-bundle.sh -j 2 --targets "lathe gpu_attention lathe_bench_attention \
#     lathe_bench_prefill_attention" --bundle perf-bundle --xz; then bin/gpu_attention.xz removed
#   (the carry limit): the prefill tests run in call 2
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s37c1; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
timeout 25 $b/bin/lathe_bench_prefill_attention --shapes 32/8/128 --dtypes bf16 --cells 1x4096 --kernels ws \
  --block-size 64 >$W/canary.txt 2>&1
echo "canary rc=$? $((SECONDS - t0))s" >>$S
grep -v "gemm pin" $W/canary.txt >>$S
# The boot line of the prefill attention route (2aefcd7).
timeout 90 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda --batch-sizes 1 \
  --input-len 1024 --output-len 8 >$W/latency.txt 2>$W/latency.log
echo "latency rc=$? $((SECONDS - t0))s" >>$S
grep -i 'prefill attention' $W/latency.log >>$S
tail -3 $W/latency.txt >>$S
# Decode attention at the serve's kernels, block size 64 (the default since session 36) and 16.
for bs in 64 16; do
  timeout 200 $b/bin/lathe_bench_attention --out $W/attn_bs$bs --kernels serve --policies auto+pack,auto+pack+slices \
    --batches 1,16 --contexts 4096,16384,65536 --block-size $bs >$W/attn_bs$bs.txt 2>&1
  echo "== lathe_bench_attention bs=$bs rc=$? $((SECONDS - t0))s" >>$S
done
# The split count's price at batch 16 (bytes differ per count; a measurement, not a candidate policy).
timeout 100 $b/bin/lathe_bench_attention --out $W/attn_pinned --kernels serve --policies auto+pack,pinned4+pack,pinned16+pack \
  --batches 16 --contexts 4096,16384 --dtypes bf16 --block-size 64 >$W/attn_pinned.txt 2>&1
echo "== pinned sweep rc=$? $((SECONDS - t0))s" >>$S
PYTHONUNBUFFERED=1 timeout 120 python3 tools/peers/sdpa_decode.py --out $W/sdpa.csv >$W/sdpa.log 2>&1
echo "== sdpa rc=$? $((SECONDS - t0))s" >>$S
for bs in 64 16; do
  python3 bench/attention/targets.py $W/attn_bs$bs/attention_bench.csv $W/sdpa.csv --b1-policy auto+pack+slices --kv bf16 \
    >$W/targets_bs${bs}_bf16.txt 2>&1
  python3 bench/attention/targets.py $W/attn_bs$bs/attention_bench.csv $W/sdpa.csv --b1-policy auto+pack+slices --kv fp8 \
    >$W/targets_bs${bs}_fp8.txt 2>&1
  echo "== targets bs=$bs" >>$S; tail -25 $W/targets_bs${bs}_bf16.txt >>$S
done
python3 bench/attention/compare_runs.py $W/attn_bs64/attention_bench.csv $W/attn_bs16/attention_bench.csv >$W/compare_64_vs_16.txt 2>&1
echo "== bs64 vs bs16" >>$S; cat $W/compare_64_vs_16.txt | head -60 >>$S
echo "== pinned" >>$S; grep -v '^#' $W/attn_pinned.txt | tail -20 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
