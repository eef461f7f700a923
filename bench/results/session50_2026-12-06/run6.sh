#!/usr/bin/env bash
# Session 50, call 7 (bundle p50b-bundle = ab5a3f1, main's `auto` with ':sa' on the two-CTA ring):
# the GPU suites on the default, the fp8 decode-width table with cuBLASLt FP8, and one step each
# of Qwen3-8B-FP8, Qwen3-8B and Qwen3-32B-FP8 with the defaults. Arms start only under LIMIT seconds.
#   scripts/device-bundle.sh -j 2 --bundle p50b-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p50b-bundle}"
decode_suites
fp8_table
step_arm 8b Qwen3-8B-FP8 ""
step_arm 8bb Qwen3-8B ""
step_arm 32b Qwen3-32B-FP8 ""
# Batch 8 (the 16-row tier, where ':sa' was 0-3 points slower by kernel): the default against the
# same shapes without ':sa' (their session-49 names), alternated, two rounds.
NOSA8="fp8/6144x4096=ring:k5:g16:wg:wgn,fp8/4096x4096=ring:k5:g16:wg:wgn,fp8/4096x12288=ring:k8:g16:wg:wgn"
NOSA32="fp8/10240x5120=ring:k3:g16:wg:wgn,fp8/5120x8192=ring:k6:g16:wg:wgn,fp8/5120x25600=ring:s4:k6:g16:wg:wgn"
b8() {
  (( SECONDS - t0 < ${LIMIT:-400} )) || return
  local f=$W/b8_$1.txt
  env LATHE_GEMV_SHAPE_VARIANTS="$3" timeout 120 "$b/bin/lathe" bench latency "configs/$2" --load-format dummy \
    --device cuda --input-len 1024 --batch-sizes 8,12 --output-len 32 --out "$W/b8_$1.json" >"$f" 2>&1
  echo "b8 $1 rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' "$f") $((SECONDS - t0))s" >>"$S"
}
for r in 1 2; do
  b8 8b_sa_r$r Qwen3-8B-FP8 ""
  b8 8b_nosa_r$r Qwen3-8B-FP8 "$NOSA8"
  b8 32b_sa_r$r Qwen3-32B-FP8 ""
  b8 32b_nosa_r$r Qwen3-32B-FP8 "$NOSA32"
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
