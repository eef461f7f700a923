#!/usr/bin/env bash
# Session 35, call 4: what bounds the TMA-fed ws kernel. Nsight Compute on one launch of the ws kernel
# (1 x 16384, 32/8/128, BF16 and FP8 KV): speed of light, warp states, scheduler; then the benchmark
# (BF16, 32/8/128) beside builds of the ws kernel with a 3- and 6-slot ring and one whose consumers
# wait only for the first ring's worth of tiles (timing only, wrong bytes), two rounds.
#   scripts/device-bundle.sh -j 2 --targets "lathe_bench_prefill_attention" --bundle perf-bundle --xz \
#     --add lathe_bench_prefill_attention_s3=/tmp/diag/lathe_bench_prefill_attention_s3 (and _s6, _nowait)
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s35c4; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>$S
t0=$SECONDS
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for dt in bf16 fp8; do
  timeout 150 $NCU --graph-profiling node --kernel-name regex:paged_prefill_ws --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis \
    $b/bin/lathe_bench_prefill_attention --shapes 32/8/128 --dtypes $dt --cells 1x16384 --kernels ws \
    >$W/ncu_$dt.txt 2>&1
  echo "== ncu $dt rc=$? $((SECONDS - t0))s" >>$S
  grep -E "Duration|Throughput|Busy|Pipe|Stall|Warp Cycles|Issued|Eligible|Active Warps|No Eligible|L2 Hit|Bandwidth|Mem Busy|Max Bandwidth" \
    $W/ncu_$dt.txt | head -40 >>$S
done
for round in 1 2; do
  for bin in lathe_bench_prefill_attention lathe_bench_prefill_attention_s3 lathe_bench_prefill_attention_s6 \
      lathe_bench_prefill_attention_nowait; do
    timeout 120 $b/bin/$bin --shapes 32/8/128 --dtypes bf16 --kernels ws >$W/${bin}_r$round.txt 2>&1
    echo "== $bin round $round rc=$? $((SECONDS - t0))s" >>$S
    grep -E "^32/8" $W/${bin}_r$round.txt >>$S
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
