#!/usr/bin/env bash
# Session 48, for the next call: main's new `auto` (b27a556: ':wgn' in tiers 1 and 4 on the two-CTA
# fp8 ring, ':wg' in the fp8 balanced grid's 16- and 32-row tiers) validated and timed: (1) the GPU
# suites on the new default; (2) the fp8 decode-width table with cuBLASLt FP8 in the same process;
# (3) the balanced fp8 shapes (gate|up, lm_head) under the new auto, the old `ringbal:b3` and the
# two-CTA `ringbal:wg`; (4) the decode step, new default against session 47's default (the old
# auto's variants named per shape) on Qwen3-8B-FP8 and Qwen3-32B-FP8, and on 32B a third arm with
# gate|up on `ringbal:wg` (two CTAs per SM: slower at 1 and 4 rows, faster at 16 and 32 by kernel),
# alternated. Each step arm starts only while the elapsed time is under LIMIT seconds (default
# 400; LIMIT=170 fits a call of ~240 s when device time is short).
#   scripts/device-bundle.sh -j 2 --bundle p48-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p48-bundle}"
limit=${LIMIT:-400}
gpu_suite gemv gpu_cuda_gemv_test
gpu_suite op gpu_cuda_op_test
gpu_suite invariance gpu_batch_invariance
gpu_suite golden gpu_golden_qwen3
timeout 60 $b/bin/lathe_bench_kernels --only qwen3- --widths 1,4,16 --dtype fp8 >$W/table_fp8.txt 2>&1
echo "table fp8 rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $W/table_fp8.txt | head -1 | cut -c1-60)" >>$S
sed -n '/^summary/,$p' $W/table_fp8.txt >>$S
cp $W/table_fp8.txt $OUT/
for shape in qwen3-32b/gate_up qwen3.5-27b/gate_up qwen3-8b/lm_head; do
  f=$W/cand_${shape//\//_}.txt
  timeout 30 $b/bin/lathe_bench_kernels --variants --variant-list auto,ringbal:b3,ringbal:wg \
    --only $shape --dtype fp8 --widths 1,4,16,32 --no-peers >$f 2>&1
  echo "== $shape rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $f | cut -c1-40)" >>$S
  grep -hE " v:" $f | awk '{print $2, $6, $7, $8, $(NF-1), $NF}' >>$S
done
old8="fp8/6144x4096=ring:k5:g16:wg,fp8/4096x4096=ring:k5:g16:wg,fp8/4096x12288=ring:k8:g16:wg"
old32="fp8/10240x5120=ring:k3:g16:wg,fp8/5120x8192=ring:k6:g16:wg,fp8/5120x25600=ring:s4:k6:g16:wg,fp8/51200x5120=ringbal:b3"
arm() { (( SECONDS - t0 < limit )) && step_latency "$@"; }
for r in 1 2; do
  arm 32b_new_r$r Qwen3-32B-FP8 ""
  arm 32b_old_r$r Qwen3-32B-FP8 "$old32"
  arm 32b_bal2_r$r Qwen3-32B-FP8 "fp8/51200x5120=ringbal:wg"
  arm 8b_new_r$r Qwen3-8B-FP8 ""
  arm 8b_old_r$r Qwen3-8B-FP8 "$old8"
done
grep -h "not fused into" $W/latency_*.txt | sort -u | head -8 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
