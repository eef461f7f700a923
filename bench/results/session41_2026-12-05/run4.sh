#!/usr/bin/env bash
# Session 41, call 4 (BUNDLE=full-bundle of the commit that lets the 32-row tier run any ring
# depth): `auto` takes a four-step fp8 ring on Qwen3-32B down, which the tier refused, so that
# layer still ran the halves. (1) gpu_cuda_gemv_test (with the new Qwen3_32B_down case) and
# gpu_batch_invariance; (2) Qwen3-32B down fp8 at 24 / 32 rows, auto (now one pass) beside the
# stream kernel; (3) the Qwen3-32B-FP8 decode step, LATHE_FFN_BATCH32 off / default, two rounds.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-full-bundle}"
gpu_suite gemv gpu_cuda_gemv_test LATHE_NONE=1
gpu_suite invariance gpu_batch_invariance LATHE_NONE=1
timeout 120 $b/bin/lathe_bench_kernels --variants --variant-list auto,stream:b2:tma --only qwen3-32b/down --dtype fp8 \
  --widths 16,24,32 --no-peers >$W/v_32b_down.txt 2>&1
echo "== qwen3-32b/down fp8 rc=$? $((SECONDS - t0))s" >>$S
grep -h "read ceiling\| v:" $W/v_32b_down.txt >>$S
for r in 1 2; do
  for arm in off on; do
    LATHE_FFN_BATCH32=$arm timeout 150 $b/bin/lathe bench latency configs/Qwen3-32B-FP8 --load-format dummy \
      --device cuda --batch-sizes 16,17,24,32 --input-len 1024 --output-len 32 >$W/ab_$arm-r$r.txt 2>$W/ab_$arm-r$r.log
    printf 'batch32=%-3s r%s %4ss %s\n' $arm $r $((SECONDS - t0)) \
      "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/ab_$arm-r$r.txt)" >>$S
  done
done
grep -h "linear route: decode m=32\|x2 halves" $W/ab_on-r1.log | sort -u | head -4 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
