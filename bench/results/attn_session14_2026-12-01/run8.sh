#!/usr/bin/env bash
# Session 14 call 8 (final code): golden suites (sharded), served determinism, the quick and
# FP8-KV decode steps, the attention serve geometries with SDPA in the same call.
set -u
cd "$(dirname "$0")/.."
O=$OUT
OUT=$O/perf ATTN_BENCH_ARGS="--kernels serve --policies auto+pack,auto+pack+slices" \
  bash scripts/device-perf.sh --steps "golden determinism quick fp8kv attnbench" > $O/perf.log 2>&1
mkdir -p $O/x && tar xzf $O/perf/device-perf.tgz -C $O/x ./attnbench/attention_bench.csv ./attnbench/sdpa.csv
cp $O/x/attnbench/attention_bench.csv $O/attention_bench.csv; cp $O/x/attnbench/sdpa.csv $O/sdpa.csv; rm -rf $O/x
for kv in bf16 fp8; do
  python3 bench/attention/targets.py $O/attention_bench.csv $O/sdpa.csv --b1-policy auto+pack+slices --kv $kv > $O/targets_$kv.txt 2>&1
done
cat $O/perf/device-perf-summary.txt
tail -3 $O/targets_bf16.txt; tail -3 $O/targets_fp8.txt
