#!/usr/bin/env bash
# Session 61, call 9 (bundle p61d-bundle = main at the commit in COMMIT). Is the fused-norm form of
# ":wgn" (tiers 1 and 4 normalising x themselves, what a batch-1 step runs for q|k|v and gate|up)
# slower than mma.sync everywhere, or on the balanced grid only?
#  1. Kernel rows with the norm inside (lathe_bench_kernels --fused-norm, back to back) of the
#     q|k|v and gate|up shapes under auto, auto:wgn and auto:wgnu (fused launches on mma.sync), at 1
#     and 4 rows, two processes each;
#  2. decode steps at batch 1 (fused) and 4 (not fused: a control) of Qwen3-8B-FP8 with q|k|v and
#     gate|up on auto:wgnu against main's auto, and of Qwen3-32B-FP8 with q|k|v on auto:wgnu,
#     alternated, two rounds;
#  3. the GEMV suite's fused-norm, SwiGLU and QK-norm/RoPE cases.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p61d-bundle}"
for r in 1 2; do
  for only in "qkv(fused)" gate_up; do
    f=$W/fused_${only//[()]/_}_r$r.txt
    timeout 60 "$b/bin/lathe_bench_kernels" --variants --variant-list auto,auto:wgn,auto:wgnu --fused-norm \
      --only "$only" --dtype fp8 --widths 1,4 --no-peers >"$f" 2>&1
    echo "== fused-norm $only r$r rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' "$f" | head -1 | cut -c1-40)" >>$S
    grep -hE " v:" "$f" | awk '{print $1, $2, $6, $7, $8, $(NF-1), $NF}' >>$S
  done
done
export BATCHES=1,4
for r in 1 2; do
  step_arm 8b_auto_r$r Qwen3-8B-FP8 ""
  step_arm 8b_wgnu_r$r Qwen3-8B-FP8 "fp8/6144x4096=auto:wgnu,fp8/24576x4096=auto:wgnu"
  step_arm 32b_auto_r$r Qwen3-32B-FP8 ""
  step_arm 32b_wgnu_r$r Qwen3-32B-FP8 "fp8/10240x5120=auto:wgnu"
done
SUITE_TIMEOUT=120 gpu_suite gemv_epi gpu_cuda_gemv_test --gtest_filter='*FusedNorm*:*Silu*:*Rope*'
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
