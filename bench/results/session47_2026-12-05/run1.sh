#!/usr/bin/env bash
# Session 47, prepared for call 2 (NOT RUN: every later start failed; call 1 = session 45's run6.sh
# on an H100): (1) the gemv suite with the
# rope / fused-norm tests asking about the variant they launch (call 1's four GemvRopeTest failures);
# (2) the decode step with ':wgn' (warpgroup MMAs in tiers 1 and 4) on the two-CTA fp8 shapes that
# carry no QK-norm/RoPE epilogue (o, down), and on q|k|v too, alternated, Qwen3-8B-FP8 and
# -32B-FP8. Build the bundle from branch wip/rope-wgn (af0b731: that epilogue built for ':wgn', the
# gemv suite's rope cases under auto:wgn; reverted on main until a GPU has run it), else the
# q|k|v arm runs the separate rope kernel at 1-4 rows (its "not fused into" line says so).
# (3) the balanced-grid gate|up shapes (Qwen3-32B, Qwen3.5-27B) with the 16-row warpgroup MMA
# (`auto:wg` = ringbal:b3:wg, `ringbal:wg` at two CTAs per SM): session 23 measured it slower there,
# before session 45's K permutation, and call 1's table has 32B gate|up at 16 rows at 75.3% against
# cuBLASLt FP8's 89.3%; the 32B step with it as a third arm; (4) Nsight Compute's stall view of the
# 16-row launch on Qwen3-8B down (session 44's sections).
#   git checkout wip/rope-wgn && scripts/device-bundle.sh -j 2 --bundle p47-bundle --targets "lathe gpu_cuda_gemv_test lathe_bench_kernels lathe_bench_attention" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p47-bundle}"
gpu_suite gemv gpu_cuda_gemv_test LATHE_NONE=1
for shape in qwen3-32b/gate_up qwen3.5-27b/gate_up; do
  f=$W/cand_${shape//\//_}.txt
  timeout 60 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:wg,ringbal:wg,auto:wg:wgn \
    --only $shape --dtype fp8 --widths 1,4,16,32 --no-peers >$f 2>&1
  echo "== $shape rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $f | cut -c1-40)" >>$S
  grep -hE " v:" $f | awk '{print $2, $6, $7, $8, $(NF-1), $NF}' >>$S
done
od8="fp8/4096x4096=auto:wgn,fp8/4096x12288=auto:wgn"
all8="fp8/6144x4096=auto:wgn,$od8"
od32="fp8/5120x8192=auto:wgn,fp8/5120x25600=auto:wgn"
for r in 1 2 3; do
  step_latency 8b_new_r$r Qwen3-8B-FP8 ""
  step_latency 8b_wgnod_r$r Qwen3-8B-FP8 "$od8"
  step_latency 8b_wgnall_r$r Qwen3-8B-FP8 "$all8"
done
for r in 1 2; do
  step_latency 32b_new_r$r Qwen3-32B-FP8 ""
  step_latency 32b_wgnod_r$r Qwen3-32B-FP8 "$od32"
  step_latency 32b_wgbal_r$r Qwen3-32B-FP8 "fp8/51200x5120=auto:wg"
done
grep -h "not fused into" $W/latency_*.txt | sort -u | head -8 >>$S
f=$W/ncu_8b_down_m16.txt
(( SECONDS - t0 < 260 )) && timeout $((400 - (SECONDS - t0))) ncu --clock-control none --kernel-name-base mangled \
  -k regex:gemv_kernelILi16 -s 3 -c 1 --section SourceCounters --section WarpStateStats \
  --section SchedulerStats --section MemoryWorkloadAnalysis_Tables --print-details all \
  $b/bin/lathe_bench_kernels --variants --variant-list auto --no-peers --only qwen3-8b/down --widths 16 \
  --dtype fp8 >$f 2>&1
echo "ncu 8b down m=16 auto rc=$? $((SECONDS - t0))s" >>$S
grep -iE "stall|warp cycles|scoreboard|barrier|issued" $f | head -24 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
