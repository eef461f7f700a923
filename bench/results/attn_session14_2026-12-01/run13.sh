#!/usr/bin/env bash
# Session 14 call 13: plain loads walking the paged KV cache (lathe_probe_kv_walk: linear, chunk
# list, the split kernel's walk) beside the real split kernel and its no-arithmetic build, 32/8/128
# BF16, serve geometries, same call, two rounds.
set -u
cd "$(dirname "$0")/.."
for f in ab-bundle/bin/*.gz ab-bundle/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
chmod +x ab-bundle/bin/*
export LD_LIBRARY_PATH="$PWD/ab-bundle/lib:/usr/local/cuda/lib64"
b=ab-bundle/bin
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader > $S
args="--kernels serve --policies auto+pack+slices --shapes 32/8/128 --dtypes bf16"
for r in 1 2; do
  timeout 60 $b/lathe_probe_kv_walk 1 65536 1 16384 16 4096 16 16384 >> $S 2>&1
  echo "probe r$r rc=$?" >> $S
  for v in real nomath; do
    bin=$b/lathe_bench_attention; [[ $v == nomath ]] && bin=$b/nomath_bench
    timeout 60 $bin $args --batches 1,16 --contexts 4096,16384,65536 > $OUT/bench_${v}_r$r.txt 2>&1
    echo "bench $v r$r rc=$?" >> $S
    grep -E "^32/8/128" $OUT/bench_${v}_r$r.txt | awk -v v=$v '{print v, $3, $4, $14, "us", $18, "read", $20}' >> $S
  done
done
cat $S
