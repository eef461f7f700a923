#!/usr/bin/env bash
# Session 62, call 1 (bundle p62-bundle = main 37839df). What runs depends on the card:
# - H200 (the issues' device, whose figures are from sessions 48 and 50): the issue-5 tables under
#   the `h200` declaration with SDPA in the same call, the fp8 GEMV table with cuBLASLt FP8, the
#   whole default kernel table (d602c96's bench: the 32-row tier as "ours" at 17..32 rows),
#   Qwen3-8B-FP8 / Qwen3-8B / Qwen3-32B-FP8 decode steps, gpu_golden_qwen3.
# - otherwise (an H100): the whole default kernel table (d602c96's bench, never run), then the
#   split-K geometries at batch 4-16 with BF16 KV on the 8-KV-head shapes, where the issue-5 table
#   misses the SDPA rule (session 60: 64/8/128 batch 4 at 64k 88.5% against SDPA's 97.3): 14 (head
#   rows, 3 CTAs per SM), 17 (14 with 3 stages, 2 per SM: 14's bytes), 22 (14 on the persistent
#   grid), 24 (positions as MMA rows), 25 (24 persistent: the wide serve's kernel), in two
#   processes.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p62-bundle}"
LIMIT=${LIMIT:-480}
full_table() {
  mkdir -p $OUT/full
  timeout 120 "$b/bin/lathe_bench_kernels" --out $OUT/full >$W/full_stdout.txt 2>&1
  echo "full table rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $W/full_stdout.txt | head -1 | cut -c1-60)" >>$S
  sed -n '/^summary/,$p' $W/full_stdout.txt >>$S
}
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  declared_issue5_tables
  fp8_table
  full_table
  export BATCHES=1,4,16,32
  step_arm 8b_fp8 Qwen3-8B-FP8 ""
  step_arm 8b_bf16 Qwen3-8B ""
  step_arm 32b_fp8 Qwen3-32B-FP8 ""
  (( SECONDS - t0 < LIMIT )) && gpu_suite golden gpu_golden_qwen3
else
  full_table
  for r in 1 2; do
    attn_bench "geometries r$r" "$W/geom_r$r" 150 --kernels 14,17,22,24,25 --policies auto+pack --dtypes bf16 \
      --shapes 32/8/128,64/8/128 --batches 4,8,16 --contexts 1024,4096,16384,65536
  done
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
