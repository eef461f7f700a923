#!/usr/bin/env bash
# Session 42, call 3: the warpgroup-MMA x buffers with the 128-byte swizzle (a warp's x staging
# stores conflict-free), bundle B (BUNDLE=full-bundle), against bundle A (bundle-a: 067a7e7, the
# no-swizzle layout; its default route is main's) in the same call.
#   scripts/device-bundle.sh -j 2 --bundle full-bundle --xz   (A: the same at 067a7e7, copied to bundle-a)
# (1) correctness on B: gpu_cuda_gemv_test (default, and fp8 forced onto wgmma in every tier),
#     gpu_batch_invariance, gpu_golden_qwen3;
# (2) the kernel table (peers, read ceiling) of B, then A, then B again at 1, 4, 16 and 32 rows;
# (3) Qwen3-8B-FP8 decode steps, A and B alternated, two rounds.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-full-bundle}"
A=$(cd bundle-a && pwd)
scripts/bundle-unpack.sh "$A" || echo "unpack of $A failed"
gpu_suite gemv gpu_cuda_gemv_test LATHE_NONE=1
gpu_suite gemv-wg gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:wg:wgn --gtest_filter='*fp8*'
gpu_suite invariance gpu_batch_invariance LATHE_NONE=1
gpu_suite gpu_golden_qwen3 gpu_golden_qwen3 LATHE_NONE=1
run_with() {  # BUNDLE_DIR CMD...: a command against that bundle's libraries
  local dir=$1
  shift
  LD_LIBRARY_PATH="$dir/lib:/usr/local/cuda/lib64" "$@"
}
for arm in B A B2; do
  d=$b; [[ $arm == A ]] && d=$A
  run_with $d timeout 100 $d/bin/lathe_bench_kernels --only qwen3 --widths 1,4,16,32 --dtype fp8 >$W/kernels_$arm.txt 2>&1
  echo "== kernels $arm rc=$? $((SECONDS - t0))s" >>$S
done
for arm in A B; do
  grep -h "read ceiling" $W/kernels_$arm.txt >>$S
  grep -hE "^qwen3-(8b|32b) " $W/kernels_$arm.txt | grep -E " (gemv|gemv_batch4|gemv_batch16|gemv_batch32|cublaslt fp8) " |
    awk -v a=$arm '{print a, $1, $2, $6, $7, $8, $(NF-2), $NF}' >>$S
done
for r in 1 2; do
  for arm in A B; do
    (( SECONDS - t0 > 540 )) && break 2
    d=$b; [[ $arm == A ]] && d=$A
    run_with $d timeout 60 $d/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
      --batch-sizes 1,4,16,24,32 --input-len 1024 --output-len 32 >$W/step_$arm-r$r.txt 2>/dev/null
    echo "== step $arm r$r rc=$? $((SECONDS - t0))s" >>$S
    grep -vE '^\s*$' $W/step_$arm-r$r.txt | tail -6 >>$S
  done
done
cat $S
