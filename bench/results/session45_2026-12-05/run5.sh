#!/usr/bin/env bash
# Session 45, call 5 (call 4 could not start; 5 minutes of device time left): the final sources'
# gemv suite (the rope epilogue fix) and two alternated rounds of the Qwen3-8B-FP8 decode step, new
# default against the previous choice.
#   scripts/device-bundle.sh -j 2 --bundle p45-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p45-bundle}"
gpu_suite gemv gpu_cuda_gemv_test LATHE_NONE=1
gpu_suite invariance gpu_batch_invariance LATHE_NONE=1
old8="fp8/6144x4096=ring:k5:g16,fp8/4096x4096=ring:k5:g16,fp8/4096x12288=ring:k8:g16"
for r in 1 2; do
  step_latency 8b_new_r$r Qwen3-8B-FP8 ""
  step_latency 8b_old_r$r Qwen3-8B-FP8 "$old8"
done
grep -hE "QK-norm, RoPE" $W/latency_8b_new_r1.txt | head -1 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
