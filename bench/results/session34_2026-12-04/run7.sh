#!/usr/bin/env bash
# Session 34, call 7 (perf-bundle at the commit it names: the shared benchmark helpers, no kernel
# change): that the refactored timers give the figures they gave before. bench latency's GEMM
# reference (lt_best_flops), the prefill benchmark (DeviceBuffer, lt_best_flops), a slice of the
# decode attention benchmark (DeviceBuffer), and both SDPA peers (cuda_graph_timing.py) on a few cells.
#   scripts/device-bundle.sh -j 2 --targets "lathe lathe_bench_prefill_attention lathe_bench_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s34c7; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
timeout 60 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda --batch-sizes 1 \
  --input-len 1024 --output-len 4 >$W/latency.txt 2>$W/latency.log
echo "== bench latency rc=$? $((SECONDS - t0))s" >>$S
grep -E "GEMM reference|^ +1 " $W/latency.txt >>$S
timeout 60 $b/bin/lathe_bench_prefill_attention --shapes 32/8/128 >$W/prefill.txt 2>&1
echo "== prefill bench rc=$? $((SECONDS - t0))s" >>$S
grep -v "gemm pin" $W/prefill.txt >>$S
timeout 60 $b/bin/lathe_bench_attention --shapes 32/8/128 --dtypes bf16 --batches 1,16 --contexts 4096 \
  --policies auto+pack >$W/attn.txt 2>&1
echo "== attention bench rc=$? $((SECONDS - t0))s" >>$S
tail -6 $W/attn.txt >>$S
timeout 60 python3 tools/peers/sdpa_prefill.py --shapes 32/8/128 --cells 16x1024 >$W/sdpa_prefill.txt 2>$W/sdpa_prefill.log
echo "== sdpa_prefill rc=$? $((SECONDS - t0))s" >>$S
cat $W/sdpa_prefill.txt >>$S
timeout 60 python3 tools/peers/sdpa_decode.py --quick >$W/sdpa_decode.txt 2>&1
echo "== sdpa_decode rc=$? $((SECONDS - t0))s" >>$S
grep "^sdpa 32/8/128" $W/sdpa_decode.txt >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
