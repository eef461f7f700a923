#!/usr/bin/env bash
# Session 45, call 3 (its first attempt lost: the device machine stopped answering; rerun with one
# 32B round): main with `auto` taking `:wg` on the two-CTA fp8 shapes (2258d93).
# (1) GPU suites on the new default; (2) in the decode step, Qwen3-8B-FP8 and Qwen3-32B-FP8 (dummy
# weights, 1k context, batch 1 / 4 / 16 / 32): the default against the previous choice (mma.sync in
# every tier of those shapes, named through LATHE_GEMV_SHAPE_VARIANTS), alternated; (3) candidates
# for tiers 1 and 4 and the staging depth: `auto` against `auto:wgn` and `auto:g2`; (4) the fp8
# table with cuBLASLt FP8 in the same process.
#   scripts/device-bundle.sh -j 2 --bundle p45-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p45-bundle}"
gpu_suite gemv gpu_cuda_gemv_test LATHE_NONE=1
gpu_suite op gpu_cuda_op_test LATHE_NONE=1
gpu_suite invariance gpu_batch_invariance LATHE_NONE=1
gpu_suite golden gpu_golden_qwen3 LATHE_NONE=1
old8="fp8/6144x4096=ring:k5:g16,fp8/4096x4096=ring:k5:g16,fp8/4096x12288=ring:k8:g16"
old32="fp8/10240x5120=ring:k3:g16,fp8/5120x8192=ring:k6:g16,fp8/5120x25600=ring:s4:k6:g16"
lat() {  # lat TAG MODEL OVERRIDES
  local f=$W/latency_$1.txt
  env LATHE_GEMV_SHAPE_VARIANTS="$3" timeout 120 $b/bin/lathe bench latency configs/$2 --load-format dummy \
    --device cuda --input-len 1024 --batch-sizes 1,4,16,32 --output-len 32 --out $W/latency_$1.json >$f 2>&1
  echo "latency $1 rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $f) $((SECONDS - t0))s" >>$S
}
for r in 1 2; do
  lat 8b_new_r$r Qwen3-8B-FP8 ""
  lat 8b_old_r$r Qwen3-8B-FP8 "$old8"
done
grep -hE "linear route: decode m=16 fp8|gemv variant|GEMV" $W/latency_8b_new_r1.txt | head -3 >>$S
# ('auto:g2' is not a variant: each of these runs stopped after m = 1, as call 3 recorded.)
for shape in qwen3-8b/down qwen3-8b/qkv qwen3-8b/q/o_proj qwen3-32b/q_proj qwen3-32b/o_proj qwen3-32b/down qwen3-8b/gate; do
  f=$W/cand_${shape//\//_}.txt
  timeout 60 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:wgn,auto:g2 \
    --only $shape --dtype fp8 --widths 1,4,16 --no-peers >$f 2>&1
  echo "== $shape rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $f | cut -c1-40)" >>$S
  grep -hE " v:" $f | awk '{print $2, $6, $7, $8, $(NF-1), $NF}' >>$S
done
timeout 100 $b/bin/lathe_bench_kernels --only qwen3- --widths 1,4,16,32 --dtype fp8 >$W/table_fp8.txt 2>&1
echo "table fp8 rc=$? $((SECONDS - t0))s" >>$S
cp $W/table_fp8.txt $OUT/
if ((SECONDS - t0 < 300)); then
  lat 32b_new_r1 Qwen3-32B-FP8 ""
  lat 32b_old_r1 Qwen3-32B-FP8 "$old32"
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
