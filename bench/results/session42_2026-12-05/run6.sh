#!/usr/bin/env bash
# Session 42, the served determinism check on main's code (perf-bundle of 1df9863: ebda34e's sources)
# the 32-row default (session 41) has not had: scripts/device-perf.sh's determinism step
# (Qwen3-8B-FP8, decode graphs on, a request alone = beside 31 others; then a second server with
# preemptions and 64-token steps), bounded so that a short device budget still gets the first.
#   scripts/device-bundle.sh -j 2 --bundle perf-bundle --targets "lathe gpu_golden_qwen3 lathe_bench_kernels" --with-tokenizer --xz
set -uo pipefail
timeout "${DETERMINISM_LIMIT:-560}" bash scripts/device-perf.sh --steps "determinism"
echo "device-perf rc=$?" >>$OUT/summary.txt
cat $OUT/summary.txt
