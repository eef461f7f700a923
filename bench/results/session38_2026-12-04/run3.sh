#!/usr/bin/env bash
# Session 38, call 3 (perf-bundle at wip/kv-l2 5c8...: the --kv-l2 lever). The serve kernels at
# batch 1 (16k, 64k; auto+pack+slices) and batch 16 (4k, 16k; auto+pack), BF16, under each L2
# promotion / eviction setting of the K/V copies; the default first and last (drift).
#   scripts/device-bundle.sh -j 2 --targets "lathe_bench_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s38c3; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
B=$b/bin/lathe_bench_attention
n=0
for kv in 256:first 256:normal 128:first 0:first 0:normal 64:first 256:first; do
  n=$((n + 1))
  timeout 60 $B --kv-l2 $kv --policies auto+pack+slices --batches 1 --contexts 16384,65536 --dtypes bf16 >$W/b1_$n.txt 2>&1
  timeout 60 $B --kv-l2 $kv --policies auto+pack --batches 16 --contexts 4096,16384 --dtypes bf16 >$W/b16_$n.txt 2>&1
  echo "== $n $kv $((SECONDS - t0))s" >>$S
  grep -hE '^[0-9]' $W/b1_$n.txt $W/b16_$n.txt | awk '{print $1,$3,$4,$13,$14,$18,$20}' >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
