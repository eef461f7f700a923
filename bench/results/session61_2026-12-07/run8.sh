#!/usr/bin/env bash
# Session 61, call 8 (bundle p61c-bundle: gpu_cuda_gemv_test of main 971c67f, the fused-norm
# test naming ':wgnu' without ':xt' for bf16 weights; call 7's bf16 cases asked for ':xt', which is
# built for fp8 only). The whole GEMV suite.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p61c-bundle}"
SUITE_TIMEOUT=240 gpu_suite gemv gpu_cuda_gemv_test
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
