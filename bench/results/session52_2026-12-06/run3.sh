#!/usr/bin/env bash
# Session 52, call 3 (bundle p52-bundle = main 854404d): split slices at batch 1 with an FP8 KV
# cache. Call 1 (H100) found 2 slices per split faster than auto's 3 (and than none, the h100
# declaration) on 24/4/256 and 64/8/128 with FP8 KV at 16k / 64k; this call sweeps 1-3 slices at
# 1k-64k for both KV dtypes, then Qwen3-32B-FP8 (64/8/128) and Qwen3-8B-FP8 batch-1 decode steps
# with an FP8 KV cache at 4k / 16k / 32k under 1, 2 and 3 slices, alternated, two rounds.
#   (bundle as in run1.sh)
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p52-bundle}"
mkdir -p $W/slices
timeout 200 $b/bin/lathe_bench_attention --out $W/slices --kernels serve --policies auto+pack+slices \
  --slices 1,2,3 --batches 1 --contexts 1024,4096,16384,65536 >$W/slices/bench.txt 2>&1
echo "== slices rc=$? $((SECONDS - t0))s $(grep -h 'ceiling' $W/slices/bench.txt | head -1 | cut -c1-60)" >>$S
grep -E "^[0-9]+/[0-9]+/[0-9]+ " $W/slices/bench.txt | sed 's/  *out [0-9a-f]*$//' >>$S
for r in 1 2; do
  for model in Qwen3-32B-FP8 Qwen3-8B-FP8; do
    for len in 4096 16384 32768; do
      for sl in 1 2 3; do
        (( SECONDS - t0 < ${LIMIT:-500} )) || continue
        [[ $model == Qwen3-8B-FP8 && $sl == 3 ]] && continue  # 72 pairs: 3 slices measured slower in call 1
        f=$W/fp8kv_${model}_${len}_s${sl}_r$r.txt
        LATHE_ATTN_DECODE_SPLIT_SLICES=$sl timeout 100 $b/bin/lathe bench latency configs/$model --load-format dummy \
          --device cuda --kv-cache-dtype fp8 --input-len $len --batch-sizes 1 --output-len 32 >$f 2>&1
        echo "fp8kv $model L$len slices $sl r$r rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $f) $((SECONDS - t0))s" >>$S
      done
    done
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
