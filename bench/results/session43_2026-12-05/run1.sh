#!/usr/bin/env bash
# Session 43, call 1, branch wip/x-natural-timing (TIMING EXPERIMENTS, wrong sums, never for main):
# where the 16-row fp8 warpgroup-MMA tier's time goes. LATHE_GEMV_X_TIMING_MODE: 0 main's x staging
# (in ed0b0a1's swizzled layout, measured level with main in session 42), 1 natural-order 16-byte
# staging into that layout (conflict-free), 2 x staged for the first two groups only (no x
# traffic after them), 3 no conversion or MMA (weights loaded, x staged). Separate kernel
# instantiations; the 1-row figures are each process's reference. Alternated, two rounds.
#   (on the branch, or main + x-timing-branch.patch) scripts/device-bundle.sh -j 2 --bundle kern-bundle --targets lathe_bench_kernels --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-kern-bundle}"
for r in 1 2; do
  for mode in 0 1 2 3; do
    for shape in qwen3-8b/gate qwen3-8b/down qwen3-32b/gate qwen3-32b/q_proj; do
      f=$W/m${mode}_r${r}_${shape//\//_}.txt
      LATHE_GEMV_X_TIMING_MODE=$mode timeout 60 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:wg \
        --only $shape --dtype fp8 --widths 1,16 --no-peers >$f 2>&1
      echo "== mode$mode r$r $shape rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $f | cut -c1-40)" >>$S
      grep -hE " v:" $f | awk -v a=mode$mode '{print a, $2, $6, $7, $8, $(NF-1), $NF}' >>$S
    done
  done
done
cd $W && tar -cJf $OUT/runs.tar.xz *.txt && rm -f *.txt
cat $S
