#!/usr/bin/env bash
# Session 55, call 1 (bundle p55-bundle = main 9447c07: the split-K occupancy cap, under auto the persistent grid balanced, variant 28). On any part:
#   scripts/device-bundle.sh -j 2 --bundle p55-bundle --targets "lathe lathe_bench_attention gpu_attention gpu_cuda_wave_fill_test" --xz
# 1. the cap's tests: the padded shared memory admits exactly the cap (driver's occupancy
#    calculator), and the output bytes under caps 1-3 and auto equal those without;
# 2. the serve kernels at batch 4-64 (auto+pack, both KV dtypes, 1k-64k) under
#    LATHE_ATTN_CTAS_PER_SM = off, auto, 2, 3, 4, 5, two rounds, alternated;
# 3. kernels 14, 24 and 28 (24 with deeper stages) pinned under off / auto (FP8 groups of 8: does
#    the cap close 24's gap to 14? do deeper stages help the one-wave grids of batch 4?);
# 4. the issue-5 tables under auto, with SDPA in the same call;
# 5. decode steps with an FP8 KV cache (dummy weights), off against auto, alternated, while time
#    lasts (LIMIT s from the start): Qwen3-32B-FP8 batch 16 at 16k, Qwen3-8B-FP8 batch 16 at 4k.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p55-bundle}"
gpu_suite wavefill gpu_cuda_wave_fill_test
gpu_suite bytes gpu_attention --gtest_filter='*CtasPerSm*:*PipelineDepthIsByteNeutral*'
for r in 1 2; do
  for cap in off auto 2 3 4 5; do
    LATHE_ATTN_CTAS_PER_SM=$cap attn_bench "cap $cap r$r" "$W/cap_${cap}_r$r" 60 --kernels serve \
      --policies auto+pack --batches 4,16,64
  done
done
for cap in off auto; do
  LATHE_ATTN_CTAS_PER_SM=$cap attn_bench "kernels 14,24,28 cap $cap" "$W/k142428_$cap" 60 --kernels 14,24,28 \
    --policies auto+pack --batches 4,16,64 --contexts 4096,16384,65536
done
LATHE_ATTN_CTAS_PER_SM=auto issue5_tables auto+pack auto+pack+slicesauto:2 --slices auto:2
for cell in Qwen3-32B-FP8:16:16384 Qwen3-8B-FP8:16:4096 Qwen3-32B-FP8:16:16384 Qwen3-8B-FP8:16:4096; do
  IFS=: read -r model batch len <<<"$cell"
  for cap in off auto; do
    (( SECONDS - t0 < ${LIMIT:-360} )) || continue
    f=$W/step_${model}_B${batch}_L${len}_$cap.txt
    [[ -e $f ]] && f=${f%.txt}_r2.txt
    LATHE_ATTN_CTAS_PER_SM=$cap timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy \
      --device cuda --kv-cache-dtype fp8 --input-len $len --batch-sizes $batch --output-len 16 >$f 2>&1
    echo "step $model B$batch L$len $cap rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $f) $((SECONDS - t0))s" >>$S
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
