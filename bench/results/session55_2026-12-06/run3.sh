#!/usr/bin/env bash
# Session 55, call 3 (bundle p55-bundle = main 55f34a1, as run2.sh; the device time left was too
# short for run2.sh): the co-batch determinism suite and the cap's byte test under the new default
# (LATHE_ATTN_CTAS_PER_SM=auto, where the cap follows the batch), then the serve kernels at batch
# 4-64 off against auto, one round.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p55-bundle}"
LATHE_TEST_DEVICE=cuda timeout 100 "$b/bin/gpu_attention" --gtest_brief=1 \
  --gtest_filter='*CoBatch*:Determinism.*:*CtasPerSm*' >"$W/bytes.txt" 2>&1
echo "bytes rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$W/bytes.txt" | tr '\n' ' ') $((SECONDS - t0))s" >>"$S"
grep -E '^\[  FAILED  \]|Failure' "$W/bytes.txt" | head -10 >>"$S"
for cap in off auto; do
  LATHE_ATTN_CTAS_PER_SM=$cap attn_bench "cap $cap" "$W/cap_$cap" 30 --kernels serve --policies auto+pack --batches 4,16,64
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
