#!/usr/bin/env bash
# Run HERE. Builds the attention GPU test and the attention benchmark (and `lathe` with
# ATTN_BUNDLE_LATHE=1) in a CUDA build directory (default build-attn-cuda) and packs them, gzipped
# (the kernel variants make them ~15 MB each; device_run.sh unpacks), with their non-system
# shared libraries into attn-bundle/{bin,lib} for bench/attention/device_run.sh (carry
# ["attn-bundle"]); scripts/device-bundle.sh does the work.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
targets="gpu_attention lathe_bench_attention"
[[ -n "${ATTN_BUNDLE_LATHE:-}" ]] && targets="$targets lathe"
exec "$root/scripts/device-bundle.sh" --build "${1:-$root/build-attn-cuda}" --bundle attn-bundle --targets "$targets" \
  --gzip
