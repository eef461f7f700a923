#!/usr/bin/env bash
# Session 55, call 1 (bundle p55-bundle = main 6606836, the split-K occupancy cap). On any part:
#   scripts/device-bundle.sh -j 2 --bundle p55-bundle --targets "lathe lathe_bench_attention gpu_attention gpu_cuda_wave_fill_test" --xz
# 1. the cap's tests: the padded shared memory admits exactly the cap (driver's occupancy
#    calculator), and the output bytes under caps 1-3 and auto equal those without;
# 2. the serve kernels at batch 4-64 (auto+pack, both KV dtypes, 1k-64k) under
#    LATHE_ATTN_CTAS_PER_SM = off, auto, 2, 3, 4, 5, two rounds, alternated;
# 3. kernels 14 and 24 pinned under off / auto (FP8 groups of 8: does the cap close 24's gap?);
# 4. the issue-5 tables under auto, with SDPA in the same call.
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
  LATHE_ATTN_CTAS_PER_SM=$cap attn_bench "kernels 14,24 cap $cap" "$W/k1424_$cap" 60 --kernels 14,24 \
    --policies auto+pack --batches 4,16,64 --contexts 4096,16384,65536
done
LATHE_ATTN_CTAS_PER_SM=auto issue5_tables auto+pack auto+pack+slicesauto:2 --slices auto:2
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
