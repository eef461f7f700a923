#!/usr/bin/env bash
# Session 69, call 1 (bundle p69-bundle: main 904b5dd's kernels and defaults, plus the opt-in
# variant 29). On an H200 (the issues' device; its GEMV table and decode steps are unmeasured
# since session 50): session 67's run2.sh as it is (the whole kernel table with cuBLASLt FP8 and
# cuBLAS BF16 in the same process; decode steps of Qwen3-8B-FP8, Qwen3-8B and Qwen3-32B-FP8 at
# batch 1 / 4 / 16 / 32). On an H100 (whose figures are recent): this session's run3.sh, the
# variant-29 A/B.
set -uo pipefail
export BUNDLE=${BUNDLE:-p69-bundle}
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  exec bash bench/results/session67_2026-12-07/run2.sh
fi
exec bash bench/results/session69_2026-12-08/run3.sh
