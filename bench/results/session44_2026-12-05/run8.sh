#!/usr/bin/env bash
# Session 44, call 8 (H100): main's warpgroup-MMA x layout against session 42's swizzled one, on one
# machine. Call 7's `auto:wg` at 16 rows (main 596d08f) was 4-5 points below calls 1 and 3's mode 0
# (main's staging in the swizzled layout) on 8B down and 32B q, with mma.sync's `auto` level across
# the calls. Bundles: mainb-bundle (596d08f, lathe_bench_kernels) and kern-bundle (d94e795 + session
# 43's timing patch: mode 0 = the swizzled layout with main's staging, mode 1 = natural staging,
# wrong sums). Alternated, three rounds, fp8, 1 / 4 / 16 rows.
#   scripts/device-bundle.sh -j 2 --bundle mainb-bundle --targets lathe_bench_kernels --xz
set -uo pipefail
source scripts/bundle-env.sh kern-bundle
scripts/bundle-unpack.sh mainb-bundle >/dev/null 2>&1
mb=$(cd mainb-bundle && pwd)
for r in 1 2 3; do
  for shape in qwen3-8b/down qwen3-8b/gate qwen3-32b/q_proj qwen3-8b/qkv; do
    for build in main sw0 sw1; do
      f=$W/${build}_r${r}_${shape//\//_}.txt
      if [[ $build == main ]]; then
        LD_LIBRARY_PATH=$mb/lib:/usr/local/cuda/lib64 timeout 60 $mb/bin/lathe_bench_kernels --variants \
          --variant-list auto,auto:wg --only $shape --dtype fp8 --widths 1,4,16 --no-peers >$f 2>&1
      else
        LATHE_GEMV_X_TIMING_MODE=${build#sw} timeout 60 $b/bin/lathe_bench_kernels --variants \
          --variant-list auto,auto:wg --only $shape --dtype fp8 --widths 1,4,16 --no-peers >$f 2>&1
      fi
      echo "== $build r$r $shape rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $f | cut -c1-40)" >>$S
      grep -hE " v:" $f | awk -v a=$build '{print a, $2, $6, $7, $8, $(NF-1), $NF}' >>$S
    done
  done
done
cd $W && tar -cJf $OUT/runs.tar.xz *.txt && rm -f *.txt
cat $S
