#!/usr/bin/env bash
# Session 49: main's `auto` of b27a556 (':wgn' in tiers 1 and 4 of the two-CTA fp8 ring, ':wg' in
# the fp8 balanced grid's 16- and 32-row tiers), never yet run as one build, validated and timed,
# beside ':xt' (the 16-row tier's x by tensor copies, opt-in): (1) the GEMV suite (with the ':xt'
# byte tests), the op, batch-invariance and golden suites; (2) the fp8 decode-width table with
# cuBLASLt FP8 in the same process; (3) every Qwen3-8B / 32B fp8 shape at 8 and 16 rows under auto
# and auto:xt; (4) decode steps, default against every fp8 shape on auto:xt, Qwen3-8B-FP8 and
# Qwen3-32B-FP8, alternated; each arm starts only while the elapsed time is under LIMIT seconds
# (default 400).
#   scripts/device-bundle.sh -j 2 --bundle p49-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p49-bundle}"
limit=${LIMIT:-400}
gpu_suite gemv gpu_cuda_gemv_test
gpu_suite op gpu_cuda_op_test
gpu_suite invariance gpu_batch_invariance
gpu_suite golden gpu_golden_qwen3
timeout 60 $b/bin/lathe_bench_kernels --only qwen3- --widths 1,4,16 --dtype fp8 >$W/table_fp8.txt 2>&1
echo "table fp8 rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $W/table_fp8.txt | head -1 | cut -c1-60)" >>$S
sed -n '/^summary/,$p' $W/table_fp8.txt >>$S
cp $W/table_fp8.txt $OUT/
for model in qwen3-8b qwen3-32b; do
  f=$W/xt_$model.txt
  timeout 60 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:xt --only $model/ --dtype fp8 \
    --widths 8,16 --no-peers >$f 2>&1
  echo "== $model rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $f | head -1 | cut -c1-40)" >>$S
  grep -hE " v:" $f | awk '{print $1, $2, $6, $7, $8, $(NF-1), $NF}' >>$S
done
xt8="fp8/6144x4096=auto:xt,fp8/4096x4096=auto:xt,fp8/24576x4096=auto:xt,fp8/4096x12288=auto:xt"
xt32="fp8/10240x5120=auto:xt,fp8/5120x8192=auto:xt,fp8/51200x5120=auto:xt,fp8/5120x25600=auto:xt"
arm() { (( SECONDS - t0 < limit )) && step_latency "$@"; }
for r in 1 2 3; do
  arm 8b_new_r$r Qwen3-8B-FP8 ""
  arm 8b_xt_r$r Qwen3-8B-FP8 "$xt8"
done
for r in 1 2; do
  arm 32b_new_r$r Qwen3-32B-FP8 ""
  arm 32b_xt_r$r Qwen3-32B-FP8 "$xt32"
done
grep -h "not fused into" $W/latency_*.txt | sort -u | head -8 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
