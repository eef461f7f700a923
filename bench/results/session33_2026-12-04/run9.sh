#!/usr/bin/env bash
# Session 33, call 9 (perf-bundle at this commit, whose sources are 803406f's): the model-level
# GPU suites on the final code, scripts/device-perf.sh --steps golden (4 shards):
# gpu_golden_qwen3 and gpu_batch_invariance.
#   scripts/device-bundle.sh -j 2 --targets "gpu_golden_qwen3 gpu_batch_invariance" --bundle perf-bundle --xz
set -uo pipefail
real_out=$OUT
export OUT=/tmp/s33c9; rm -rf $OUT; mkdir -p $OUT
scripts/device-perf.sh --steps golden
tar -C $OUT -cJf $real_out/all.tar.xz .
