#!/usr/bin/env bash
# Session 54, call 2 (bundle p53c-bundle, as call 1). On any part: the wide serves' split-K kernels
# pinned side by side on the head-dim-128 shapes at batch 16 and 64, 4k-64k, both KV dtypes, two
# processes: 14 (16-position tiles), 19 (the same geometry with 32-position tiles), 17 (14 with
# deeper stages), 24 (14 with positions as the MMA rows) and 25 (24 on the persistent grid, what a
# wide serve runs): do twice the bytes per copy close the 4-5 points the 8-KV-head shapes lose to
# a read at batch >= 16 (call 1)? On an H200 also call 1's H200 steps (run1.sh).
#   scripts/device-bundle.sh -j 2 --bundle p53c-bundle --targets "lathe lathe_bench_attention lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p53c-bundle}"
for r in 1 2; do
  mkdir -p "$W/tiles_r$r"
  timeout 90 "$b/bin/lathe_bench_attention" --out "$W/tiles_r$r" --kernels 14,17,19,24,25 --policies auto+pack \
    --shapes 32/8/128,64/8/128 --batches 16,64 --contexts 4096,16384,65536 >"$W/tiles_r$r/bench.txt" 2>&1
  echo "== tiles r$r rc=$? $((SECONDS - t0))s $(grep -h 'ceiling' "$W/tiles_r$r/bench.txt" | head -1 | cut -c1-60)" >>"$S"
done
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  slice_sweep
  issue5_tables auto+pack+slicesauto auto+pack+slicesauto --slices auto:8,auto:2
  auto2_targets  # scripts/bundle-env.sh
  floor_sweep
  slice_floor_ab auto:8
  fp8_table
  export BATCHES=1,4,16,32 LIMIT=300
  for model in Qwen3-8B-FP8 Qwen3-32B-FP8 Qwen3-8B; do step_arm $model $model ""; done
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
