#!/usr/bin/env bash
# Session 44, call 10 (H100): run9.sh's commands on the swizzled x buffers without the `:f<N>` change
# (4475e7f, the code that lands): `auto` against `auto:wg` (mma.sync's rows the control against calls
# 1, 3, 7 and 9), the fp8 table with cuBLASLt FP8, and the GPU suites.
#   scripts/device-bundle.sh -j 2 --bundle sw2-bundle --targets "gpu_cuda_gemv_test lathe_bench_kernels gpu_batch_invariance gpu_golden_qwen3" --xz
BUNDLE=${BUNDLE:-sw2-bundle} exec bash "$(dirname "$0")/run9.sh"
