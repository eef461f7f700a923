#!/usr/bin/env bash
# Session 51, call 2 (bundle p51b-bundle, 71923f8): ':sa' with bounded waits in its decision form
# (call 1 ran the claim form, slower than the last split summing alone), through call 1's script.
#   scripts/device-bundle.sh -j 2 --bundle p51b-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
BUNDLE=${BUNDLE:-p51b-bundle} exec bash "$(dirname "$0")/run1.sh"
