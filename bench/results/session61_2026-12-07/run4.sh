#!/usr/bin/env bash
# Session 61, call 4 (bundle p61-bundle = main 99c5d22). Call 3's step did not follow call 2's
# kernels (Qwen3-32B-FP8 batch 1 +0.25% under gate|up on auto:wgn, batch 4 -0.8%). Here the kernels
# as they run in a step (--after-norm: chained after the residual-add RMSNorm that writes x, the
# norm's time taken off) for the gate|up shapes under auto, auto:wgn and auto:s4 at 1 and 4 rows,
# two processes.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p61-bundle}"
for r in 1 2; do
  f=$W/after_norm_r$r.txt
  timeout 60 "$b/bin/lathe_bench_kernels" --variants --variant-list auto,auto:wgn,auto:s4 --after-norm \
    --only gate_up --dtype fp8 --widths 1,4 --no-peers >"$f" 2>&1
  echo "== after-norm r$r rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' "$f" | head -1 | cut -c1-40)" >>$S
  grep -hE " v:|norm alone" "$f" | awk '{print $1, $2, $6, $7, $8, $(NF-1), $NF}' >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
