#!/usr/bin/env bash
# Session 44, call 6 (H100): the h100 declaration with GQA packing on (b275c3f), end to end.
# (1) the boot line `lathe info` prints on the H100; (2) the served determinism check (now packed);
# (3) Qwen3-8B-FP8 decode steps (dummy weights) at 4k and 16k context, batch 1 and 16, the
# declaration (packing on) against LATHE_ATTN_DECODE_GQA_PACK=off, alternated, two rounds.
#   scripts/device-bundle.sh -j 2 --bundle perf-bundle --targets "lathe gpu_golden_qwen3 lathe_bench_kernels" --with-tokenizer --xz
set -uo pipefail
timeout 200 bash scripts/device-perf.sh --steps "determinism" >/dev/null 2>&1
rc=$?
mv $OUT/summary.txt $OUT/device-perf-summary.txt
source scripts/bundle-env.sh "${BUNDLE:-perf-bundle}"  # (re)starts $S
$b/bin/lathe info 2>&1 | grep -E "target" >>$S
echo "device-perf determinism rc=$rc" >>$S
grep -E "target defaults|IDENTICAL|DIFFERENT|determinism:|preemptions" $OUT/device-perf-summary.txt >>$S
for r in 1 2; do
  for pack in declared off; do
    for ctx in 4096 16384; do
      f=$W/latency_${pack}_in${ctx}_r$r.txt
      env $([[ $pack == off ]] && echo LATHE_ATTN_DECODE_GQA_PACK=off) timeout 90 $b/bin/lathe bench latency \
        configs/Qwen3-8B-FP8 --load-format dummy --device cuda --input-len $ctx --batch-sizes 1,16 --output-len 32 \
        --out $W/latency_${pack}_in${ctx}_r$r.json >$f 2>&1
      echo "latency pack=$pack in=$ctx r$r rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $f) $((SECONDS - t0))s" >>$S
    done
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
