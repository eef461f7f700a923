#!/usr/bin/env bash
# Session 61, call 18 (bundle p61f-bundle = main d602c96: lathe_bench_kernels timing the 32-row tier
# as "ours" at 17..32 rows, the halves beside it). The whole default table again (every shape, both
# dtypes, m = 1..32, cuBLASLt FP8 and cuBLAS BF16 in the same process), then one --variants run at
# 24 rows to check that path.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p61f-bundle}"
mkdir -p $OUT/full
timeout 300 "$b/bin/lathe_bench_kernels" --out $OUT/full >$W/full_stdout.txt 2>&1
echo "full table rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $W/full_stdout.txt | head -1 | cut -c1-60)" >>$S
sed -n '/^summary/,$p' $W/full_stdout.txt >>$S
timeout 60 "$b/bin/lathe_bench_kernels" --variants --variant-list auto,ring --only qwen3-32b/gate --dtype fp8 \
  --widths 24 --no-peers >$W/variants24.txt 2>&1
echo "variants 24 rc=$?" >>$S
grep -E " v:" $W/variants24.txt >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
