#!/usr/bin/env bash
# Session 49, call 2: `auto` with ':xt' on the fp8 balanced grid (ringbal:b3:wg:xt) validated and
# timed: (1) the GEMV suite (call 1's ':xt' test without its misaligned-x case, which gemv_launch
# refuses before any staging), the op, batch-invariance and golden suites; (2) the balanced fp8
# shapes (Qwen3-32B / Qwen3.5-27B gate|up, the Qwen3-8B / 32B lm_heads) at 1, 4, 16 and 32 rows
# under the new auto, the old one (ringbal:b3:wg) and two CTAs per SM with :xt; (3) Qwen3-32B-FP8
# decode steps, new default against gate|up on the old one and on ringbal:wg:xt (the checkpoints'
# lm_heads are bf16, and Qwen3-8B has no fp8 shape on the balanced grid), alternated while the
# elapsed time is under LIMIT seconds (default 400).
#   scripts/device-bundle.sh -j 2 --bundle p49b-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p49b-bundle}"
limit=${LIMIT:-400}
gpu_suite gemv gpu_cuda_gemv_test
gpu_suite op gpu_cuda_op_test
gpu_suite invariance gpu_batch_invariance
gpu_suite golden gpu_golden_qwen3
for shape in qwen3-32b/gate_up qwen3.5-27b/gate_up qwen3-8b/lm_head qwen3-32b/lm_head; do
  f=$W/bal_${shape//\//_}.txt
  timeout 30 $b/bin/lathe_bench_kernels --variants --variant-list auto,ringbal:b3:wg,ringbal:wg:xt --only $shape --dtype fp8 \
    --widths 1,4,16,32 --no-peers >$f 2>&1
  echo "== $shape rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $f | head -1 | cut -c1-40)" >>$S
  grep -hE " v:" $f | awk '{print $2, $6, $7, $8, $(NF-1), $NF}' >>$S
done
old32="fp8/51200x5120=ringbal:b3:wg"
arm() { (( SECONDS - t0 < limit )) && step_latency "$@"; }
for r in 1 2 3; do
  arm 32b_new_r$r Qwen3-32B-FP8 ""
  arm 32b_old_r$r Qwen3-32B-FP8 "$old32"
  arm 32b_bal2_r$r Qwen3-32B-FP8 "fp8/51200x5120=ringbal:wg:xt"
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
