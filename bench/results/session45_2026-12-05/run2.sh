#!/usr/bin/env bash
# Session 45, call 2: (1) the suites again after fp8 weights moved to a device-side reordering on
# upload (gemm: the device reordering against the host one; op harness; golden; invariance);
# (2) in the decode step, Qwen3-8B-FP8 and Qwen3-32B-FP8 (dummy weights, 1k context, batch 1 / 4 /
# 16 / 32): the default against `auto:wg` on the two-CTA fp8 shapes (q|k|v, o, down) through
# LATHE_GEMV_SHAPE_VARIANTS, alternated; (3) `auto` against `auto:wg` at 32 rows on those shapes.
#   scripts/device-bundle.sh -j 2 --bundle p45-bundle --targets "lathe gpu_cuda_gemm_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p45-bundle}"
gpu_suite gemm gpu_cuda_gemm_test LATHE_NONE=1
gpu_suite op gpu_cuda_op_test LATHE_NONE=1
gpu_suite golden gpu_golden_qwen3 LATHE_NONE=1
gpu_suite invariance gpu_batch_invariance LATHE_NONE=1
wg8="fp8/6144x4096=auto:wg,fp8/4096x4096=auto:wg,fp8/4096x12288=auto:wg"
wg32="fp8/10240x5120=auto:wg,fp8/5120x8192=auto:wg,fp8/5120x25600=auto:wg"
lat() {  # lat TAG MODEL OVERRIDES
  local f=$W/latency_$1.txt
  env LATHE_GEMV_SHAPE_VARIANTS="$3" timeout 120 $b/bin/lathe bench latency configs/$2 --load-format dummy \
    --device cuda --input-len 1024 --batch-sizes 1,4,16,32 --output-len 32 --out $W/latency_$1.json >$f 2>&1
  echo "latency $1 rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $f) $((SECONDS - t0))s" >>$S
}
for r in 1 2; do
  lat 8b_default_r$r Qwen3-8B-FP8 ""
  lat 8b_wg_r$r Qwen3-8B-FP8 "$wg8"
done
grep -hiE "load|weights" $W/latency_8b_default_r1.txt | head -5 >>$S
for shape in qwen3-8b/down qwen3-8b/qkv qwen3-8b/q/o_proj qwen3-32b/q_proj qwen3-32b/o_proj qwen3-32b/down; do
  f=$W/ab32_${shape//\//_}.txt
  timeout 60 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:wg \
    --only $shape --dtype fp8 --widths 16,32 --no-peers >$f 2>&1
  echo "== $shape rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $f | cut -c1-40)" >>$S
  grep -hE " v:" $f | awk '{print $2, $6, $7, $8, $(NF-1), $NF}' >>$S
done
if ((SECONDS - t0 < 330)); then
  lat 32b_default_r1 Qwen3-32B-FP8 ""
  lat 32b_wg_r1 Qwen3-32B-FP8 "$wg32"
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
