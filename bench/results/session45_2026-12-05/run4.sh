#!/usr/bin/env bash
# Session 45, call 4: the final sources (the rope epilogue built again for tiers 1 and 4 under
# `auto`'s ':wg'). (1) GPU suites; (2) the decode step, Qwen3-8B-FP8 (two rounds) and Qwen3-32B-FP8
# (one), new default against the previous choice (mma.sync in every tier, named per shape through
# LATHE_GEMV_SHAPE_VARIANTS), alternated; (3) the fp8 table with cuBLASLt FP8 in the same process.
#   scripts/device-bundle.sh -j 2 --bundle p45-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p45-bundle}"
gpu_suite gemv gpu_cuda_gemv_test LATHE_NONE=1
gpu_suite op gpu_cuda_op_test LATHE_NONE=1
gpu_suite invariance gpu_batch_invariance LATHE_NONE=1
gpu_suite golden gpu_golden_qwen3 LATHE_NONE=1
old8="fp8/6144x4096=ring:k5:g16,fp8/4096x4096=ring:k5:g16,fp8/4096x12288=ring:k8:g16"
old32="fp8/10240x5120=ring:k3:g16,fp8/5120x8192=ring:k6:g16,fp8/5120x25600=ring:s4:k6:g16"
for r in 1 2; do
  step_latency 8b_new_r$r Qwen3-8B-FP8 ""
  step_latency 8b_old_r$r Qwen3-8B-FP8 "$old8"
done
grep -hE "fused_rope|QK-norm, RoPE" $W/latency_8b_new_r1.txt | head -2 >>$S
timeout 100 $b/bin/lathe_bench_kernels --only qwen3- --widths 1,4,16,32 --dtype fp8 >$W/table_fp8.txt 2>&1
echo "table fp8 rc=$? $((SECONDS - t0))s" >>$S
cp $W/table_fp8.txt $OUT/
if ((SECONDS - t0 < 300)); then
  step_latency 32b_new_r1 Qwen3-32B-FP8 ""
  step_latency 32b_old_r1 Qwen3-32B-FP8 "$old32"
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
