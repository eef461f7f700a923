#!/usr/bin/env bash
# Session 34, call 5 (perf-bundle at this commit): the model-level GPU suites,
# scripts/device-perf.sh --steps golden (4 shards each): gpu_golden_qwen3 (every tiny fixture's
# CUDA logits against the f32 HF reference, greedy continuations, decode bytes alone / beside a
# row / beside a prefill chunk, chunked prefill and graph replays byte-identical) and
# gpu_batch_invariance.
#   scripts/device-bundle.sh -j 2 --targets "gpu_golden_qwen3 gpu_batch_invariance" --bundle perf-bundle --xz
set -uo pipefail
real_out=$OUT
export OUT=/tmp/s34c5; rm -rf $OUT; mkdir -p $OUT
scripts/device-perf.sh --steps golden
tar -C $OUT -cJf $real_out/all.tar.xz .
