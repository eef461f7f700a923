#!/usr/bin/env bash
# Session 69's prepared second call (not run in session 69; BUNDLE, p70-bundle by default, holds
# main's kernels and defaults): the issue-5 tables as the card's target declares them
# (declared_issue5_tables: the serve kernels, PyTorch SDPA in the same call, the three target
# counts per KV dtype), then the golden suite and gpu_attention's co-batch determinism tests
# (every variant the suite lists, 29 and 30 included).
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p70-bundle}"
rm -rf "$W"
W=$(mktemp -d)  # outside $OUT: $OUT/work.tar.xz carries it
declared_issue5_tables
tar -C $W -cJf $OUT/work.tar.xz .
SUITE_TIMEOUT=150 gpu_suite golden gpu_golden_qwen3
echo "attention determinism $(LATHE_TEST_DEVICE=cuda scripts/gtest-shards.sh "$b/bin/gpu_attention" 8 150 \
  $W/attn_det.txt --gtest_brief=1 --gtest_filter='Determinism*:*CoBatch*') $((SECONDS - t0))s" >>$S
grep -E '^\[  FAILED  \]|Failure' $W/attn_det.txt | head -10 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
