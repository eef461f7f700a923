#!/usr/bin/env bash
# Session 64, call 1 (bundle p64-bundle = main e198536, no tokenizer, whose split-K code is baab131's: a persistent
# grid whose last round would run on fewer than half the SMs launches per split; not yet run on a GPU).
# 1. $OUT/rule: session 63's run6.sh (the whole gpu_attention suite in 8 shards; the serve beside 24
#    and 25 on the grids baab131 moves, BF16, 1k-64k, two processes); $OUT/golden: gpu_golden_qwen3;
# 2. on an H200 only (the issues' device, unmeasured since sessions 48 and 50), $OUT/h200: session
#    63's run2.sh (the issue-5 tables with SDPA in the same call, the fp8 and full GEMV tables with
#    cuBLASLt in the same process, decode steps at 1k of Qwen3-8B-FP8, Qwen3-8B and Qwen3-32B-FP8),
#    then $OUT/s4: `auto:s4` against `auto` by kernel (fp8, 1/4/16 rows).
set -uo pipefail
export BUNDLE=p64-bundle
top=$OUT
mkdir -p $top/rule $top/golden
OUT=$top/rule bash bench/results/session63_2026-12-07/run6.sh >$top/rule/stdout.txt 2>&1
(
  OUT=$top/golden
  source scripts/bundle-env.sh $BUNDLE >/dev/null 2>&1
  SUITE_TIMEOUT=150 gpu_suite golden gpu_golden_qwen3
)
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  mkdir -p $top/h200
  OUT=$top/h200 timeout 330 bash bench/results/session63_2026-12-07/run2.sh >$top/h200/stdout.txt 2>&1
  # 3. Four fp8 weight steps in flight (":s4") against `auto` by kernel, two processes: on the H100
  #    (session 47) 1-2 points slower, but the H200 reads 1.45x faster with the same SMs.
  (
    OUT=$top/s4
    source scripts/bundle-env.sh $BUNDLE >/dev/null 2>&1
    for r in 1 2; do
      timeout 100 "$b/bin/lathe_bench_kernels" --variants --variant-list auto,auto:s4 --only qwen3- --dtype fp8 \
        --widths 1,4,16 --no-peers >$W/s4_r$r.txt 2>&1
      echo "s4 r$r rc=$? $((SECONDS - t0))s" >>$S
    done
  )
fi
for f in golden/summary.txt h200/summary.txt s4/summary.txt rule/stdout.txt; do
  [[ -f $top/$f ]] && { echo "== $f"; cat $top/$f; }
done
