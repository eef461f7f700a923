#!/usr/bin/env bash
# Session 52, call 4 (bundle p52s-bundle = main da79032: attn_decode_split_slices per KV dtype, the
# h100 declaration "fp8:auto"): the boot line on the H100; the golden and batch-invariance suites
# and gpu_attention's slice tests on that build; the Qwen3-32B-FP8 batch-1 decode step with an FP8
# KV cache at 1k and 16k under the declaration against LATHE_ATTN_DECODE_SPLIT_SLICES=off,
# alternated, two rounds (call 3 measured 4k-32k with pinned caps, not 1k).
#   scripts/device-bundle.sh -j 2 --bundle p52s-bundle --targets "lathe gpu_golden_qwen3 gpu_batch_invariance gpu_attention" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p52s-bundle}"
echo "info: $($b/bin/lathe info 2>&1 | grep 'target defaults')" >>$S
gpu_suite golden gpu_golden_qwen3
gpu_suite invariance gpu_batch_invariance
gpu_suite slices gpu_attention GTEST_FILTER='*SplitKSlicesAgree*:*RefusesAShortWorkspace*:*EveryArmMatchesTheReference*'
for r in 1 2; do
  for len in 1024 16384; do
    for arm in decl off; do
      (( SECONDS - t0 < ${LIMIT:-420} )) || continue
      f=$W/fp8kv_32b_${len}_${arm}_r$r.txt
      env $([[ $arm == off ]] && echo LATHE_ATTN_DECODE_SPLIT_SLICES=off) timeout 100 $b/bin/lathe bench latency \
        configs/Qwen3-32B-FP8 --load-format dummy --device cuda --kv-cache-dtype fp8 --input-len $len \
        --batch-sizes 1 --output-len 32 >$f 2>&1
      echo "fp8kv 32B L$len $arm r$r rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $f) $(grep -o 'attn_decode_split_slices=[^ ]*\( (env)\)\?' $f | head -1) $((SECONDS - t0))s" >>$S
    done
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
