#!/usr/bin/env bash
# Session 62, call 3 (bundle p62-bundle = main 37839df). run2.sh (24 against 25 by kernel and by
# decode step), preceded on an H200 (the issues' device) by its tables, into $OUT/h200: the issue-5
# tables under the `h200` declaration with SDPA in the same call, the fp8 GEMV table with cuBLASLt
# FP8 in the same process, the whole default kernel table, Qwen3-8B-FP8 / Qwen3-8B / Qwen3-32B-FP8
# decode steps (1k context, batch 1 / 4 / 16 / 32) and gpu_golden_qwen3.
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  (
    OUT=$OUT/h200
    mkdir -p $OUT
    source scripts/bundle-env.sh "${BUNDLE:-p62-bundle}"
    declared_issue5_tables
    fp8_table
    mkdir -p $OUT/full
    timeout 120 "$b/bin/lathe_bench_kernels" --out $OUT/full >$W/full_stdout.txt 2>&1
    echo "full table rc=$? $((SECONDS - t0))s" >>$S
    sed -n '/^summary/,$p' $W/full_stdout.txt >>$S
    export BATCHES=1,4,16,32
    step_latency 8b_fp8 Qwen3-8B-FP8 ""
    step_latency 8b_bf16 Qwen3-8B ""
    step_latency 32b_fp8 Qwen3-32B-FP8 ""
    gpu_suite golden gpu_golden_qwen3
    tar -C $W -cJf $OUT/work.tar.xz . && rm -rf $W
    cat $S
  )
fi
LIMIT=${LIMIT:-540} bash bench/results/session62_2026-12-07/run2.sh
