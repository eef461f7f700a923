#!/usr/bin/env bash
# Run HERE. Builds the GEMV GPU test and the kernel benchmark in a CUDA build directory (default
# build-gemv) and packs them with their non-system shared libraries into gemv-bundle/{bin,lib}
# for bench/kernels/device_run.sh (device tool, carry ["gemv-bundle"]); scripts/device-bundle.sh
# does the work.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
exec "$root/scripts/device-bundle.sh" --build "${1:-$root/build-gemv}" --bundle gemv-bundle \
  --targets "gpu_cuda_gemv_test lathe_bench_kernels lathe_probe_gemv_access"
