#!/usr/bin/env bash
# Session 69's prepared variant call (a bundle of main with the opt-in variants 29 and 30: 26 with
# 16 warps, or with 32-position tiles, where the cache is FP8 at head dim 128; BUNDLE names it,
# p70-bundle by default). On either card:
# 1. the batch-1 kernel A/B with an FP8 cache (29 and 30 run 26 itself with BF16 KV): the serve
#    kernel (26) against 29 and 30 at 4k / 16k / 64k, the three shapes, whole splits and sliced as
#    the card's target declares batch 1 (H200: auto slices; H100: auto:2), two processes (rounds;
#    the second while the time gate allows);
# 2. their byte tests: the co-batch determinism suite under 29 and 30 (both KV dtypes);
# 3. the Qwen3-8B-FP8 decode step at batch 1 with an FP8 cache at 16k context, default (26)
#    against LATHE_ATTN_SPLITK_KERNEL=29 and =30, alternated, up to two rounds (time gates).
# SHORT=1 (a call with little device time left): one process of 1. at 16k / 64k, then 2.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p70-bundle}"
rm -rf "$W"
W=$(mktemp -d)  # outside $OUT: $OUT/work.tar.xz carries it
slices=(--slices auto:2)
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && slices=()
contexts=4096,16384,65536
[[ ${SHORT:-0} == 1 ]] && contexts=16384,65536
ab_round() {
  attn_bench "b1 r$1" "$W/b1_r$1" 120 --kernels serve,29,30 --policies auto+pack,auto+pack+slices "${slices[@]}" \
    --batches 1 --contexts $contexts --dtypes fp8
  tar -C $W -cJf $OUT/work.tar.xz .
}
ab_round 1
echo "variants 29 and 30 determinism $(LATHE_TEST_DEVICE=cuda scripts/gtest-shards.sh "$b/bin/gpu_attention" 4 100 \
  $W/det29.txt --gtest_brief=1 --gtest_filter='OptIn/CoBatch.*variant29*:OptIn/CoBatch.*variant30*') $((SECONDS - t0))s" >>$S
grep -E '^\[  FAILED  \]|Failure' $W/det29.txt | head -10 >>$S
if [[ ${SHORT:-0} == 1 ]]; then
  tar -C $W -cJf $OUT/work.tar.xz .
  cat $S
  exit 0
fi
(( SECONDS - t0 < 240 )) && ab_round 2
step16k() {
  local tag=$1
  shift
  env "$@" timeout 150 "$b/bin/lathe" bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
    --input-len 16384 --batch-sizes 1 --output-len 32 --kv-cache-dtype fp8 --calculate-kv-scales \
    --out "$W/latency16k_$tag.json" >"$W/latency16k_$tag.txt" 2>&1
  echo "latency16k $tag rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' "$W/latency16k_$tag.txt") $((SECONDS - t0))s" >>$S
}
for r in 1 2; do
  (( SECONDS - t0 < 340 )) || break
  step16k default_r$r
  step16k v29_r$r LATHE_ATTN_SPLITK_KERNEL=29
  step16k v30_r$r LATHE_ATTN_SPLITK_KERNEL=30
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
