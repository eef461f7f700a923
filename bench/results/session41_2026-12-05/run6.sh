#!/usr/bin/env bash
# Session 41, prepared for the next session with a device (NOT RUN: the budget was spent). On one
# shared-library bundle of main (BUNDLE=full-bundle, scripts/device-bundle.sh -j 2 --bundle
# full-bundle --xz):
# (1) where the fp8 32-row GEMV's stalls sit: Nsight Compute's per-instruction stall sampling
#     (SourceCounters, WarpStateStats) on one Qwen3-8B gate|up launch at 32 rows (three CTAs per
#     SM, wgmma, one step of weights in flight) and, for comparison, the 16-row launch;
# (2) the served decode-step check the 32-row default has not had: `scripts/device-perf.sh`'s
#     determinism step (a request alone = beside 31 others = on a preempting server) would be the
#     next call; this script leaves it out to stay under one call's 600 s.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-full-bundle}"
for m in 32 16; do
  (( SECONDS - t0 > 450 )) && break
  timeout $((560 - (SECONDS - t0))) ncu --clock-control none --kernel-name-base mangled \
    -k regex:gemv_kernelILi$m -s 3 -c 1 --section SourceCounters --section WarpStateStats \
    --section SchedulerStats --section MemoryWorkloadAnalysis_Tables --print-details all \
    $b/bin/lathe_bench_kernels --variants --variant-list auto --no-peers --only qwen3-8b/gate --widths $m \
    --dtype fp8 >$W/ncu_src_m$m.txt 2>&1
  echo "ncu source view m=$m rc=$? $((SECONDS - t0))s" >>$S
  grep -iE "stall|warp cycles|L1TEX|scoreboard|barrier" $W/ncu_src_m$m.txt | head -30 >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
