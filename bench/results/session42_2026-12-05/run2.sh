#!/usr/bin/env bash
# Session 42, call 2: the shared-memory weight ring (":m<N>", opt-in) on its first device run.
#   scripts/device-bundle.sh -j 2 --bundle full-bundle --xz
# (1) correctness: gpu_cuda_gemv_test's new SharedMemoryRing test (every case), then the whole
#     suite's fp8 cases with ring:m4 and ring:b3:m2 as the kernel under test;
# (2) speed: fp8 variants, the register ring against its shared-memory form at 1, 4, 16 and 32
#     rows on the Qwen3-8B/32B decoder-layer shapes (no peers: the kernel table has them).
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-full-bundle}"
gpu_suite smem-ring gpu_cuda_gemv_test --gtest_filter='*SharedMemoryRing*'
gpu_suite gemv-m4 gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=ring:m4 --gtest_filter='*fp8*'
gpu_suite gemv-b3m2 gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=ring:b3:m2 --gtest_filter='*fp8*'
V=auto,auto:m2,auto:m4,ring,ring:m4,ring:b3,ring:b3:m2
for shape in qwen3-8b/gate qwen3-8b/down qwen3-8b/qkv qwen3-8b/q/o qwen3-32b/q_proj qwen3-32b/o_proj qwen3-32b/down; do
  (( SECONDS - t0 > 520 )) && break
  f=$W/v_${shape//\//_}.txt
  timeout 90 $b/bin/lathe_bench_kernels --variants --variant-list $V --only $shape --dtype fp8 \
    --widths 1,4,16,32 --no-peers >$f 2>&1
  echo "== $shape fp8 variants rc=$? $((SECONDS - t0))s" >>$S
  grep -h "read ceiling" $f >>$S
  grep -hE " v:" $f | grep -v "not available" | awk '{print $2, $6, $7, $8, $(NF-1), $NF}' >>$S
done
cat $S
