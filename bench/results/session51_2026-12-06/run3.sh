#!/usr/bin/env bash
# Session 51, call 3 (bundle p51c-bundle, 3808fa3): ':sa' with bounded waits in its third form (a
# split whose wait runs out marks its share in the arrival word; calls 1-2: two slower forms),
# through call 1's script with two rounds and no fp8 table.
#   scripts/device-bundle.sh -j 2 --bundle p51c-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
BUNDLE=${BUNDLE:-p51c-bundle} ROUNDS=2 TABLE=0 exec bash "$(dirname "$0")/run1.sh"
