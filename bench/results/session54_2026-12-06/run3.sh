#!/usr/bin/env bash
# Session 54, call 3 (bundle p53c-bundle, as calls 1-2): call 2 had the split-K kernel 14 (16-position
# tiles, query heads as the MMA rows) 7.5 points ahead of what wide serves run (25: positions as
# the MMA rows on the persistent grid) on 64/8/128 with an FP8 cache at batch 16 from 16k, and
# 2-4.5 points behind at batch 64 up to 16k. Does it show in a decode step? Qwen3-32B-FP8 (64/8/128)
# with an FP8 KV cache, dummy weights: batch 16 at 16k and batch 64 at 4k, the serve's kernel
# against LATHE_ATTN_SPLITK_KERNEL=14, alternated.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p53c-bundle}"
for cell in 16:16384 64:4096 16:16384 64:4096; do
  batch=${cell%:*} len=${cell#*:}
  for arm in serve k14; do
    (( SECONDS - t0 < ${LIMIT:-330} )) || continue
    f=$W/fp8kv_32b_B${batch}_L${len}_$arm.txt
    [[ -e $f ]] && f=${f%.txt}_r2.txt
    env $([[ $arm == k14 ]] && echo LATHE_ATTN_SPLITK_KERNEL=14) timeout 150 $b/bin/lathe bench latency \
      configs/Qwen3-32B-FP8 --load-format dummy --device cuda --kv-cache-dtype fp8 --input-len $len \
      --batch-sizes $batch --output-len 16 >$f 2>&1
    echo "fp8kv 32B B$batch L$len $arm rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $f) $(grep -o 'kernel variant [0-9]*[^,]*' $f | head -1) $((SECONDS - t0))s" >>$S
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
