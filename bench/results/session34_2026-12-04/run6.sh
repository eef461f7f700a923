#!/usr/bin/env bash
# Session 34, call 6 (perf-bundle at this commit, with the tokenizer): the served checks,
# scripts/device-perf.sh --steps determinism: Qwen3-8B-FP8's outputs alone = beside 31
# others on a default server and on a 64-block, 64-token-step server (preemptions).
#   scripts/device-bundle.sh -j 2 --targets "lathe" --bundle perf-bundle --with-tokenizer --xz
set -uo pipefail
real_out=$OUT
export OUT=/tmp/s34c6; rm -rf $OUT; mkdir -p $OUT
scripts/device-perf.sh --steps determinism
tar -C $OUT -cJf $real_out/all.tar.xz .
cat $OUT/device-perf-summary.txt 2>/dev/null || cat $OUT/summary.txt
