#!/usr/bin/env bash
# Session 33, call 6 (perf-bundle at this commit, with the tokenizer): the served checks,
# scripts/device-perf.sh --steps "determinism serve": Qwen3-8B-FP8's outputs alone = beside 31
# others on a default server and on a 64-block, 64-token-step server (preemptions); then
# `lathe bench serve` at concurrency 1, 4, 16, 64 (1024-token prompts, 256 output tokens).
#   scripts/device-bundle.sh -j 2 --targets "lathe" --bundle perf-bundle --with-tokenizer --xz
set -uo pipefail
real_out=$OUT
export OUT=/tmp/s33c6; rm -rf $OUT; mkdir -p $OUT
scripts/device-perf.sh --steps "determinism serve"
tar -C $OUT -cJf $real_out/all.tar.xz .
