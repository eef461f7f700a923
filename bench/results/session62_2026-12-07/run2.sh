#!/usr/bin/env bash
# Session 62, call 2 (bundle p62-bundle = main 37839df). The wide serve's split-K kernel with BF16
# KV at head dim 128 is 25 (24 on the persistent grid: 24's bytes, call 1's fingerprints equal);
# call 1 had 24 (one CTA per unit, under the CTAs-per-SM cap) 5% faster at batch 8 on 32/8/128.
# 1. 24 against 25, both 8-KV-head shapes, BF16, batch 2-64, 1k-64k, in two processes;
# 2. decode steps, Qwen3-8B (32/8/128) and Qwen3-32B-FP8 (64/8/128), BF16 KV, dummy weights, at
#    batch 4 / 8 / 16 / 32, the default (25) against LATHE_ATTN_SPLITK_KERNEL=24, alternated, two
#    rounds (Qwen3-8B at 1k and 4k context, Qwen3-32B-FP8 at 1k);
# 3. batch 4 from 16k, where 24 reads at ~90% of the ceiling on 64/8/128 and SDPA at ~97 (session
#    60): 24 with sequential block tables (each sequence's KV contiguous) and with 256-byte L2
#    promotion of the K/V copies, against the default.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p62-bundle}"
LIMIT=${LIMIT:-480}
for r in 1 2; do
  attn_bench "24v25 r$r" "$W/ab_r$r" 150 --kernels 24,25 --policies auto+pack --dtypes bf16 \
    --shapes 32/8/128,64/8/128 --batches 2,4,8,12,16,24,32,48,64 --contexts 1024,2048,4096,8192,16384,65536
done
steps() {  # steps TAG MODEL INPUT_LEN [VAR=VALUE]
  local tag=$1 model=$2 len=$3 f=$W/latency_$1.txt
  shift 3
  (( SECONDS - t0 < LIMIT )) || return
  env "$@" timeout 150 "$b/bin/lathe" bench latency "configs/$model" --load-format dummy --device cuda \
    --input-len "$len" --batch-sizes 4,8,16,32 --output-len 32 --kv-cache-dtype bf16 --out "$W/latency_$tag.json" >"$f" 2>&1
  echo "latency $tag rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' "$f") $((SECONDS - t0))s" >>$S
}
for r in 1 2; do
  for len in 1024 4096; do
    steps q8_${len}_k25_r$r Qwen3-8B $len
    steps q8_${len}_k24_r$r Qwen3-8B $len LATHE_ATTN_SPLITK_KERNEL=24
  done
  steps q32_1024_k25_r$r Qwen3-32B-FP8 1024
  steps q32_1024_k24_r$r Qwen3-32B-FP8 1024 LATHE_ATTN_SPLITK_KERNEL=24
done
for r in 1 2; do
  attn_bench "b4 default r$r" "$W/b4_default_r$r" 60 --kernels 24 --policies auto+pack --dtypes bf16 \
    --shapes 32/8/128,64/8/128 --batches 4 --contexts 16384,65536
  attn_bench "b4 sequential r$r" "$W/b4_sequential_r$r" 60 --kernels 24 --policies auto+pack --dtypes bf16 \
    --shapes 32/8/128,64/8/128 --batches 4 --contexts 16384,65536 --tables sequential
  attn_bench "b4 promotion256 r$r" "$W/b4_promo256_r$r" 60 --kernels 24 --policies auto+pack --dtypes bf16 \
    --shapes 32/8/128,64/8/128 --batches 4 --contexts 16384,65536 --kv-l2-promotion 256
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
