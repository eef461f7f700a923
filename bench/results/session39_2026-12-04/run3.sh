#!/usr/bin/env bash
# Session 39, call 3: whole-row K/V boxes at head dim 128 (BF16; one 16-row x 256-byte tensor copy
# per K or V box instead of two 128-byte pieces) without L2 promotion (session 14 measured them
# 1-2% slower under 256-byte promotion). bin/lathe_bench_attention from main, bin/lba_rows from
# main with tensor_box_pieces returning the whole row from head dim 128; alternated, two rounds,
# the serve kernels on the two head-dim-128 shapes, every batch and context, BF16; the output
# fingerprints must agree.
#   scripts/device-bundle.sh -j 2 --targets lathe_bench_attention --bundle attn-bundle --xz --add lba_rows=/tmp/lba_rows
set -uo pipefail
b=$PWD/attn-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s39c3; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT); added: $(cat $b/ADDED 2>/dev/null | tr '\n' ' ')" >$S
t0=$SECONDS
for r in 1 2; do
  for v in lathe_bench_attention lba_rows; do
    mkdir -p $W/${v}_r$r
    timeout 100 $b/bin/$v --out $W/${v}_r$r --kernels serve --shapes 32/8/128,64/8/128 --dtypes bf16 \
      --policies auto+pack,auto+pack+slices >$W/${v}_r$r/bench.txt 2>&1
    echo "== $v round $r rc=$? $((SECONDS - t0))s" >>$S
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
grep -h "ceiling" $W/*/bench.txt | head -4
