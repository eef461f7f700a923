#!/usr/bin/env bash
# Session 42, call 5, branch wip/x-natural-timing (a TIMING EXPERIMENT, wrong sums, never for main):
# with LATHE_GEMV_X_NATURAL_TIMING_ONLY set, the 16- and 32-row wgmma kernels stage x in natural k
# order by 16-byte copies (what a K permutation moved onto the weights at load would allow) instead
# of 4-byte copies in the permuted order; separate kernel instantiations, so the unset arm runs
# main's kernels. Alternated unset / set, two rounds, fp8, 16 and 32 rows.
#   scripts/device-bundle.sh -j 2 --bundle full-bundle --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-full-bundle}"
for r in 1 2; do
  for arm in words natural; do
    for shape in qwen3-8b/gate qwen3-8b/down qwen3-8b/qkv qwen3-32b/q_proj qwen3-32b/down; do
      f=$W/${arm}_r${r}_${shape//\//_}.txt
      if [[ $arm == natural ]]; then
        LATHE_GEMV_X_NATURAL_TIMING_ONLY=1 timeout 60 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:wg \
          --only $shape --dtype fp8 --widths 16,32 --no-peers >$f 2>&1
      else
        timeout 60 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:wg \
          --only $shape --dtype fp8 --widths 16,32 --no-peers >$f 2>&1
      fi
      echo "== $arm r$r $shape rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $f | cut -c1-40)" >>$S
      grep -hE " v:" $f | awk -v a=$arm '{print a, $2, $6, $7, $8, $(NF-1), $NF}' >>$S
    done
  done
done
cd $W && tar -cJf $OUT/runs.tar.xz *.txt && rm -f *.txt
cat $S
