#!/usr/bin/env bash
# Session 55, call 2 (bundle p55-bundle = main 55f34a1: LATHE_ATTN_CTAS_PER_SM=auto the default,
# a one-wave grid spread at ceil(CTAs / SMs) per SM; the persistent grid as before). On any part:
#   scripts/device-bundle.sh -j 2 --bundle p55-bundle --targets "lathe lathe_bench_attention gpu_attention gpu_cuda_wave_fill_test" --xz
# 1. the byte tests of the cap and of the pipeline depths (28 against 24), and the co-batch
#    determinism suite, now under auto, where the cap follows the batch;
# 2. the serve kernels at batch 4-64, off against auto (the default), two rounds, alternated;
# 3. the issue-5 tables under the default, SDPA in the same call;
# 4. if time is left for both arms: the Qwen3-8B-FP8 step with an FP8 cache at batch 4 and 16k
#    (a one-wave grid), off against auto.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p55-bundle}"
LATHE_TEST_DEVICE=cuda timeout 130 "$b/bin/gpu_attention" --gtest_brief=1 \
  --gtest_filter='*CtasPerSm*:*PipelineDepthIsByteNeutral*:*CoBatch*:Determinism.*' >"$W/bytes.txt" 2>&1
echo "bytes rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$W/bytes.txt" | tr '\n' ' ') $((SECONDS - t0))s" >>"$S"
grep -E '^\[  FAILED  \]|Failure' "$W/bytes.txt" | head -10 >>"$S"
for r in 1 2; do
  for cap in off auto; do
    LATHE_ATTN_CTAS_PER_SM=$cap attn_bench "cap $cap r$r" "$W/cap_${cap}_r$r" 60 --kernels serve \
      --policies auto+pack --batches 4,16,64
  done
done
issue5_tables auto+pack auto+pack+slicesauto:2 --slices auto:2
if (( SECONDS - t0 < ${LIMIT:-230} )); then
  for cap in off auto; do
    f=$W/step_Qwen3-8B-FP8_B4_L16384_$cap.txt
    LATHE_ATTN_CTAS_PER_SM=$cap timeout 45 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy \
      --device cuda --kv-cache-dtype fp8 --input-len 16384 --batch-sizes 4 --output-len 16 >$f 2>&1
    echo "step Qwen3-8B-FP8 B4 L16384 $cap rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $f) $((SECONDS - t0))s" >>$S
  done
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
