#!/usr/bin/env bash
# Session 54, call 4 (bundle p54-bundle: main with variant 27, the wide serves' geometry: 14 with
# FP8 KV at head dim 128 and 8 query heads a CTA, else 25): the issue-5 tables with the serve
# kernels (now 27 at batch >= 4) and SDPA in the same call, under each part's declaration at batch
# 1, then the split-K decode tests that cover 27 (the new DecodeWideServe test, the co-batch
# determinism of 27 and of 25, the byte-neutral pipeline depths).
#   scripts/device-bundle.sh -j 2 --bundle p54-bundle --targets "lathe gpu_attention lathe_bench_attention" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p54-bundle}"
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && h200=1 || h200=0
if (( h200 )); then
  issue5_tables auto+pack+slices auto+pack+slices
else
  issue5_tables auto+pack auto+pack+slicesauto:2 --slices auto:2
fi
gpu_suite wide gpu_attention GTEST_FILTER='*DecodeWideServe*:*variant27*:*variant25*:*PipelineDepthIsByteNeutral*'
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
