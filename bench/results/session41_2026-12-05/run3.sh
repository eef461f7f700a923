#!/usr/bin/env bash
# Session 41, call 3, on the bundle of main after 284916c (BUNDLE=full-bundle): the 32-row tier on by default
# and the 16-row wgmma spill fixed (927a6cc).
# (1) correctness: gpu_cuda_gemv_test (default, and fp8 forced onto wgmma), gpu_batch_invariance
#     with the default (the 32-row tier) and LATHE_FFN_BATCH32=off (the halves), gpu_golden_qwen3;
# (2) the kernel table at 1, 4, 16 and 32 rows with peers and the read ceiling (the 16-row fix);
# (3) fp8 variants of the 32-row tier on the decoder-layer shapes at 24 and 32 rows;
# (4) decode steps under the new default across the batch widths (one round), Qwen3-8B-FP8,
#     Qwen3-8B and Qwen3-32B-FP8, input 1024.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-full-bundle}"
gpu_suite gemv gpu_cuda_gemv_test LATHE_NONE=1
gpu_suite gemv-wg gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:wg:wgn --gtest_filter='*fp8*'
gpu_suite invariance gpu_batch_invariance LATHE_NONE=1
gpu_suite invariance-halves gpu_batch_invariance LATHE_FFN_BATCH32=off
gpu_suite gpu_golden_qwen3 gpu_golden_qwen3 LATHE_NONE=1
timeout 200 $b/bin/lathe_bench_kernels --only qwen3 --widths 1,4,16,32 >$W/kernels.txt 2>&1
echo "== kernels rc=$? $((SECONDS - t0))s" >>$S
grep -h "read ceiling" $W/kernels.txt >>$S
grep -hE "^qwen3-(8b|32b) " $W/kernels.txt | grep -vE "old default|read \(same" |
  awk '{print $1, $2, $5, $6, $7, $8, $9, $NF}' >>$S
for shape in qwen3-8b/gate qwen3-8b/down qwen3-8b/qkv qwen3-32b/gate qwen3-32b/down; do
  timeout 120 $b/bin/lathe_bench_kernels --variants --variant-list auto,stream:b2:tma,stream,ringbal,ring:k2:wg:wgn \
    --only $shape --dtype fp8 --widths 24,32 --no-peers >$W/v_${shape//\//_}.txt 2>&1
  echo "== $shape fp8 variants rc=$? $((SECONDS - t0))s" >>$S
  grep -h " batch32" $W/v_${shape//\//_}.txt | awk '{print $2, $6, $7, $8, $9, $NF}' >>$S
done
for m in Qwen3-8B-FP8 Qwen3-8B Qwen3-32B-FP8; do
  timeout 200 $b/bin/lathe bench latency configs/$m --load-format dummy --device cuda \
    --batch-sizes 1,4,8,16,17,24,32,33,48,64 --input-len 1024 --output-len 32 >$W/s_$m.txt 2>$W/s_$m.log
  echo "== step $m rc=$? $((SECONDS - t0))s" >>$S
  awk '$1 ~ /^[0-9]+$/ && NF > 8' $W/s_$m.txt | head -1 >/dev/null
  grep -vE '^\s*$' $W/s_$m.txt | tail -14 >>$S
done
# The lever's A/B again now that the halves' 16-row kernel no longer spills (call 2 ran both arms
# with the spilling one): Qwen3-8B-FP8 off / default, two rounds.
for r in 1 2; do
  for arm in off on; do
    LATHE_FFN_BATCH32=$arm timeout 100 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy \
      --device cuda --batch-sizes 16,17,24,32 --input-len 1024 --output-len 32 >$W/ab_$arm-r$r.txt 2>/dev/null
    printf 'batch32=%-3s r%s %s\n' $arm $r "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/ab_$arm-r$r.txt)" >>$S
  done
done
# Nsight Compute on one 32-row fp8 launch (mangled name gemv_kernelILi32...): Qwen3-8B gate|up
# (ring, three CTAs per SM, wgmma) and Qwen3-32B gate|up (balanced grid, mma.sync), 32 rows.
for shape in qwen3-8b/gate qwen3-32b/gate; do
  (( SECONDS - t0 > 500 )) && break
  timeout $((590 - (SECONDS - t0))) ncu --clock-control none --kernel-name-base mangled -k regex:gemv_kernelILi32 \
    -s 3 -c 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats \
    --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    $b/bin/lathe_bench_kernels --variants --variant-list auto --no-peers --only $shape --widths 32 --dtype fp8 \
    >$W/ncu_${shape//\//_}_m32.txt 2>&1
  echo "ncu $shape m=32 rc=$? $((SECONDS - t0))s" >>$S
  grep -E "Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Issue Slots Busy|Registers Per|Achieved Occupancy|Stall|L1/TEX Hit|Shared" \
    $W/ncu_${shape//\//_}_m32.txt | head -24 >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
