#!/usr/bin/env bash
# Prepared in session 39, NOT RUN. The register ring with a rolling L2 prefetch (`:p<N>`: each step
# also asks L2 for the weights N steps past its refill; gemv_rolling_prefetch.patch on 4e99801).
# Its runtime switch perturbs the default kernels' code too (ptxas: 138 of 231 kernels change
# registers or spills, 18 spill more; gemv_rolling_prefetch_ptxas_diff.txt), so main's binary runs
# beside the branch's default. Build (shared-library bundle, 602d3fa):
#   git worktree add /tmp/wt-pf main && (cd /tmp/wt-pf && git apply <this folder>/gemv_rolling_prefetch.patch)
#   cmake -S /tmp/wt-pf -B /tmp/wt-pf/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLATHE_CUDA=ON \
#     -DLATHE_CUDA_ARCHS=90a -DLATHE_SHARED_LIBS=ON && ninja -C /tmp/wt-pf/build lathe_bench_kernels
#   scripts/device-bundle.sh -j 2 --targets lathe_bench_kernels --bundle pf-bundle --xz \
#     --add lbk_pf=/tmp/wt-pf/build/bench/kernels/lathe_bench_kernels
set -uo pipefail
b=$PWD/pf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT); added: $(cat $b/ADDED | tr '\n' ' ')" >$S
for r in 1 2; do
  timeout 120 $b/bin/lathe_bench_kernels --variants --variant-list auto --shapes decode --widths 1,4,16 \
    --no-peers >$W/main_r$r.txt 2>&1
  echo "== main round $r rc=$?" >>$S
  timeout 200 $b/bin/lbk_pf --variants --variant-list auto,auto:p1,auto:p2,auto:p4,auto:p8 --shapes decode \
    --widths 1,4,16 --no-peers >$W/pf_r$r.txt 2>&1
  echo "== prefetch round $r rc=$?" >>$S
done
cat $S
grep -h "v:auto" $W/main_r1.txt | awk '{print $1, $2, $5, $6, $8}' | head -40
grep -h "v:auto" $W/pf_r1.txt | awk '{print $1, $2, $5, $6, $7, $8}' | head -120
