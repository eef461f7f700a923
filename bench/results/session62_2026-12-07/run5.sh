#!/usr/bin/env bash
# Prepared in session 62, not run: the third shape for the persistent grid's lead (PERFORMANCE,
# "Session 62" under "Paged decode attention"). A full bundle of main at or after 80377a7
# (`lathe_bench_attention --shapes` takes any label) as BUNDLE. 24 (per split) against 25 (the
# persistent grid past one wave) with a BF16 cache on 40/8/128 (Qwen3-14B: groups of 5, 7 splits
# under auto at 132 SMs: 56 units a sequence, between 32/8/128's 72 and 64/8/128's 40) beside the
# two measured shapes, batch 4-64, 1k-64k, two processes; then `kernel_columns.py ... --base 25`
# reads them.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:?set BUNDLE to a bundle of main at or after 80377a7}"
for r in 1 2; do
  attn_bench "third shape r$r" "$W/third_r$r" 150 --kernels 24,25 --policies auto+pack --dtypes bf16 \
    --shapes 40/8/128,32/8/128,64/8/128 --batches 4,8,12,16,24,32,64 --contexts 1024,4096,16384,65536
done
python3 bench/attention/kernel_columns.py $W/third_r1/attention_bench.csv $W/third_r2/attention_bench.csv \
  --base 25 >$W/third_columns.txt 2>&1
tar -C $W -cJf $OUT/work.tar.xz .
cat $S $W/third_columns.txt
