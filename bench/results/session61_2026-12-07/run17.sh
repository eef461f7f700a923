#!/usr/bin/env bash
# Session 61, call 17 (bundle p61e-bundle = main 1a223b9, whose GEMV code is HEAD's). The issue-4
# kernel table in full: every linear shape of Qwen3-8B, Qwen3-32B and the Qwen3.5-27B class, fp8 and
# bf16, m = 1, 2, 4, 8, 16, 24, 32, our tier beside cuBLASLt FP8 (per-tensor scales) and cuBLAS
# BF16, the read ceiling measured in the same process (`lathe_bench_kernels`, default arguments).
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p61e-bundle}"
mkdir -p $OUT/full
timeout 420 "$b/bin/lathe_bench_kernels" --out $OUT/full >$W/full_stdout.txt 2>&1
echo "full table rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $W/full_stdout.txt | head -1 | cut -c1-60)" >>$S
tail -30 $W/full_stdout.txt >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
