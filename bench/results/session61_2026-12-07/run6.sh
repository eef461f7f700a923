#!/usr/bin/env bash
# Session 61, call 6 (bundle p61-bundle = main 99c5d22). Call 5: at batch 1 (x normalised inside
# tier 1) gate|up on auto:wgn lengthens the Qwen3-32B-FP8 step by 0.3%, with the separate norm it
# shortens it by 1.1%. Here the eager per-op profile (LATHE_PROFILE=1: an event around every op, no
# graphs, no chaining) of batch 1 and 4 under both arms, alternated, two rounds: is the fused
# gate|up kernel itself slower under :wgn?
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p61-bundle}"
for r in 1 2; do
  for arm in auto wgn; do
    ov=""; [[ $arm == wgn ]] && ov="fp8/51200x5120=auto:wgn"
    f=$W/profile_${arm}_r$r.txt
    LATHE_PROFILE=1 LATHE_GEMV_SHAPE_VARIANTS="$ov" timeout 120 "$b/bin/lathe" bench latency configs/Qwen3-32B-FP8 \
      --load-format dummy --device cuda --batch-sizes 1,4 --input-len 1024 --output-len 16 >$f 2>$W/profile_${arm}_r$r.log
    echo "== profile $arm r$r rc=$? $((SECONDS - t0))s" >>$S
    grep -iE "gate|norm|silu|step|batch" $f | head -30 >>$S
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
