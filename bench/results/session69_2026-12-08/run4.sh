#!/usr/bin/env bash
# Session 69's last call, for the ~250 s of device time left (bundle p70-bundle = d4705a5: main's
# kernels and defaults with the opt-in variants 29 and 30): one process of run3.sh's batch-1 FP8
# A/B at 16k / 64k (the serve kernel 26 against 29 and 30, whole splits and sliced as the card's
# target declares), then, while time allows, their co-batch byte tests.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p70-bundle}"
rm -rf "$W"
W=$(mktemp -d)  # outside $OUT: $OUT/work.tar.xz carries it
slices=(--slices auto:2)
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && slices=()
attn_bench "b1 r1" "$W/b1_r1" 80 --kernels serve,29,30 --policies auto+pack,auto+pack+slices "${slices[@]}" \
  --batches 1 --contexts 16384,65536 --dtypes fp8
tar -C $W -cJf $OUT/work.tar.xz .
grep -E '^[0-9]+/' "$W/b1_r1/attention_bench.csv" | cut -d, -f1,4,5,9,10,12,14 >>$S
echo "variants 29 and 30 determinism $(LATHE_TEST_DEVICE=cuda scripts/gtest-shards.sh "$b/bin/gpu_attention" 4 70 \
  $W/det29.txt --gtest_brief=1 --gtest_filter='OptIn/CoBatch.*variant29*:OptIn/CoBatch.*variant30*') $((SECONDS - t0))s" >>$S
grep -E '^\[  FAILED  \]|Failure' $W/det29.txt | head -10 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
