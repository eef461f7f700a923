#!/usr/bin/env bash
# Prepared in session 45 for the next GPU call (not run): (1) the gemv suite on the final sources
# (the rope-check fix ef692a8 has not run on a GPU) and the other suites; (2) candidates for the
# two-CTA fp8 shapes now that x is staged in natural order: `:wgn` in tiers 1 and 4, and the
# three-CTA wave with `:wg` (`auto:b3:wg`), and (session 46) four weight steps in the ring (`auto:s4`:
# with `:wg` the 16-row tier refills a slot only after computing it, so s2 keeps one step in flight
# while it computes, s4 three; ptxas: 126 registers, no spills), at 1 / 4 / 16 rows; (3) the Qwen3-8B-FP8 step, the
# default against the pre-session-45 choice (mma.sync in every tier of those shapes), alternated.
# On an H200 this is also the check session 24's contrary step result asks for. Still the first
# call to make after session 46 (no machine lent there), on a bundle of main (BUNDLE=p46-bundle).
#   scripts/device-bundle.sh -j 2 --bundle p45-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p45-bundle}"
gpu_suite gemv gpu_cuda_gemv_test LATHE_NONE=1
gpu_suite op gpu_cuda_op_test LATHE_NONE=1
gpu_suite invariance gpu_batch_invariance LATHE_NONE=1
gpu_suite golden gpu_golden_qwen3 LATHE_NONE=1
for shape in qwen3-8b/down qwen3-8b/qkv qwen3-8b/q/o_proj qwen3-32b/q_proj qwen3-32b/o_proj qwen3-32b/down; do
  f=$W/cand_${shape//\//_}.txt
  timeout 60 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:wgn,auto:b3:wg,auto:s4 \
    --only $shape --dtype fp8 --widths 1,4,16 --no-peers >$f 2>&1
  echo "== $shape rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $f | cut -c1-40)" >>$S
  grep -hE " v:" $f | awk '{print $2, $6, $7, $8, $(NF-1), $NF}' >>$S
done
old8="fp8/6144x4096=ring:k5:g16,fp8/4096x4096=ring:k5:g16,fp8/4096x12288=ring:k8:g16"
# Session 46: a third arm, four weight steps in the ring of the two-CTA shapes. Compare batch 16 and
# 32 (the 32-row tier keeps its own depth): at batch 1 and 4 it also drops the q|k|v GEMV's
# QK-norm/RoPE epilogue (built at depth 2 only; the step log's "not fused into" lines say so).
s4_8="fp8/6144x4096=auto:s4,fp8/4096x4096=auto:s4,fp8/4096x12288=auto:s4"
for r in 1 2; do
  step_latency 8b_new_r$r Qwen3-8B-FP8 ""
  step_latency 8b_old_r$r Qwen3-8B-FP8 "$old8"
  step_latency 8b_s4_r$r Qwen3-8B-FP8 "$s4_8"
done
grep -hE "QK-norm, RoPE" $W/latency_8b_new_r1.txt | head -1 >>$S
# Session 46: fusions the levers ask for but a tier refused (none expected on the 8B q|k|v, gate|up).
grep -h "not fused into" $W/latency_8b_new_*.txt $W/latency_8b_old_*.txt | sort -u | head -8 >>$S
timeout 100 $b/bin/lathe_bench_kernels --only qwen3- --widths 1,4,16,32 --dtype fp8 >$W/table_fp8.txt 2>&1
echo "table fp8 rc=$? $((SECONDS - t0))s" >>$S
cp $W/table_fp8.txt $OUT/
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
