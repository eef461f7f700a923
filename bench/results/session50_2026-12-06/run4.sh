#!/usr/bin/env bash
# Session 50, call 4 (bundle p50-bundle = b32500d): which of Qwen3-8B-FP8's two-CTA shapes gives
# ':sa' its batch-16/32 step gain (call 3: -2.0% / -3.3% with all three), and ':sa' on bf16
# weights: Qwen3-8B (BF16) steps and the bf16 8B shapes at 16/32 rows by kernel. Two rounds, arms
# alternated; arms start only under LIMIT seconds.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p50-bundle}"
SA8="fp8/6144x4096=auto:sa,fp8/4096x4096=auto:sa,fp8/4096x12288=auto:sa"
SA8_O="fp8/4096x4096=auto:sa"
SA8_QKV_DOWN="fp8/6144x4096=auto:sa,fp8/4096x12288=auto:sa"
SA8B="bf16/6144x4096=auto:sa,bf16/4096x4096=auto:sa,bf16/4096x12288=auto:sa,bf16/24576x4096=auto:sa"
for r in 1 2; do
  step_arm 8b_main_r$r Qwen3-8B-FP8 ""
  step_arm 8b_sa_r$r Qwen3-8B-FP8 "$SA8"
  step_arm 8b_sa_o_r$r Qwen3-8B-FP8 "$SA8_O"
  step_arm 8b_sa_qkv_down_r$r Qwen3-8B-FP8 "$SA8_QKV_DOWN"
  step_arm 8bb_main_r$r Qwen3-8B ""
  step_arm 8bb_sa_r$r Qwen3-8B "$SA8B"
done
for shape in qwen3-8b/q/o qwen3-8b/qkv qwen3-8b/down qwen3-8b/gate_up; do
  f=$W/bf16_${shape//\//_}.txt
  timeout 60 "$b/bin/lathe_bench_kernels" --variants --variant-list auto,auto:sa --only $shape --dtype bf16 \
    --widths 16,32 --no-peers >"$f" 2>&1
  echo "== bf16 $shape rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' "$f" | head -1 | cut -c1-40)" >>$S
  grep -hE " v:" "$f" | awk '{print $1, $2, $6, $7, $8, $(NF-1), $NF}' >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
