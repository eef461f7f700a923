#!/usr/bin/env bash
# Prepared in session 45 for a later GPU call (not run): where the 16-row fp8 tier's time goes now
# that x is staged in natural order. Nsight Compute's stall view (session 44's run4.sh, same
# sections) of the 16-row `auto` launch (now `:wg` on the two-CTA ring) on Qwen3-8B down and
# Qwen3-32B q, beside the one-row launch of the same shape, for comparison with session 44's call 4
# (8B down 10.3 cycles between a warp's instructions, long scoreboard 4.8).
#   scripts/device-bundle.sh -j 2 --bundle p45-bundle --targets "lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p45-bundle}"
for shape in qwen3-8b/down qwen3-32b/q_proj; do
  for m in 16 1; do
    (( SECONDS - t0 > 420 )) && break
    f=$W/ncu_${shape//\//_}_m$m.txt
    timeout $((540 - (SECONDS - t0))) ncu --clock-control none --kernel-name-base mangled \
      -k regex:gemv_kernelILi$m -s 3 -c 1 --section SourceCounters --section WarpStateStats \
      --section SchedulerStats --section MemoryWorkloadAnalysis_Tables --print-details all \
      $b/bin/lathe_bench_kernels --variants --variant-list auto --no-peers --only $shape --widths $m \
      --dtype fp8 >$f 2>&1
    echo "ncu $shape m=$m auto rc=$? $((SECONDS - t0))s" >>$S
    grep -iE "stall|warp cycles|scoreboard|barrier|issued" $f | head -24 >>$S
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
