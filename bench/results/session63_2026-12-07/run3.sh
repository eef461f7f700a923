#!/usr/bin/env bash
# Session 63, call 3 (bundle p63-bundle = main 5d68aea). Two leads of call 1:
# 1. why 24 (per split) beats 25 (the persistent grid) past one wave on 32/8/128 and not on
#    64/8/128. Both take the same CTAs-per-SM cap under `auto`, but 24's CTAs are dealt out by the
#    block scheduler as slots free up while 25's CTA c runs units c, c + G, ... in fixed rounds: 24
#    and 25 under pinned caps 2 and 3 beside `auto`, two processes each (BF16, the three 8-KV-head
#    shapes at head dim 128, batch 6-32, 1k / 4k / 64k);
# 2. the narrow serve's geometry: at batch 2 call 1 had 16 (what a serve of at most 2 sequences
#    runs) at 0.73-0.91 x 25's speed. 16 against 24 and 25 at batch 1 and 2, with and without split
#    slices, both KV dtypes, the three issue shapes, two processes; then decode steps of 2-sequence
#    serves at 16k (`--batch-sizes 1,2`), the default (16) against LATHE_ATTN_SPLITK_KERNEL=25,
#    alternated: Qwen3-8B-FP8 two rounds, Qwen3-32B-FP8 one.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p63-bundle}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >>$S
for r in 1 2; do
  for cap in auto 2 3; do
    LATHE_ATTN_CTAS_PER_SM=$cap attn_bench "cap $cap r$r" "$W/cap${cap}_r$r" 60 --kernels 24,25 \
      --policies auto+pack --dtypes bf16 --shapes 32/8/128,40/8/128,64/8/128 --batches 6,8,10,12,16,24,32 \
      --contexts 1024,4096,65536
  done
  attn_bench "narrow r$r" "$W/narrow_r$r" 90 --kernels 16,24,25 --policies auto+pack,auto+pack+slices \
    --dtypes bf16,fp8 --batches 1,2 --contexts 1024,4096,16384,65536
done
narrow_step() {  # TAG MODEL [ENV...]
  local tag=$1 model=$2
  shift 2
  env "$@" timeout 150 "$b/bin/lathe" bench latency "configs/$model" --load-format dummy --device cuda \
    --input-len 16384 --batch-sizes 1,2 --output-len 32 --out "$W/narrow_$tag.json" >"$W/narrow_$tag.txt" 2>&1
  echo "narrow step $tag rc=$? $(awk '$1 ~ /^[0-9]+$/ && NF == 10 {printf "B%s %s ms  ", $1, $4}' \
    "$W/narrow_$tag.txt") $((SECONDS - t0))s" >>$S
}
for r in 1 2; do
  narrow_step 8b_fp8_k16_r$r Qwen3-8B-FP8
  narrow_step 8b_fp8_k25_r$r Qwen3-8B-FP8 LATHE_ATTN_SPLITK_KERNEL=25
done
narrow_step 32b_fp8_k16 Qwen3-32B-FP8
narrow_step 32b_fp8_k25 Qwen3-32B-FP8 LATHE_ATTN_SPLITK_KERNEL=25
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
