#!/usr/bin/env bash
# Session 61, call 14 (bundle p61e-bundle = main 1a223b9). Qwen3-32B down (5120x25600, the register
# ring, k6) costs 3 us more at 16 rows than at 8 (49.0 -> 52.0 us), though both widths run the same
# 16-row kernel with the same n16 warpgroup MMAs: only x staging, the partials and the outputs grow
# with m. Nsight Compute of one launch at each width (no clock control; the profiler's cache flush,
# so x and the weights come from DRAM): the details page and the per-instruction source page.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p61e-bundle}"
for m in 8 16; do
  timeout 90 ncu --clock-control none --set full --import-source no -k regex:gemv_kernel -s 3 -c 1 \
    -o $W/down_m$m $b/bin/lathe_bench_kernels --variants --variant-list auto --no-peers \
    --only qwen3-32b/down --widths $m --dtype fp8 >$W/ncu_run_m$m.txt 2>&1
  echo "ncu down m=$m rc=$? $((SECONDS - t0))s" >>$S
  ncu --import $W/down_m$m.ncu-rep --page details >$W/down_m${m}_details.txt 2>&1
  ncu --import $W/down_m$m.ncu-rep --page source --print-source sass --csv >$W/down_m${m}_sass.csv 2>&1
  grep -E "Duration|DRAM Throughput|Memory Throughput|Issue Slots Busy|Eligible Warps|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|No Eligible" \
    $W/down_m${m}_details.txt | head -14 >>$S
  python3 bench/kernels/sass_stalls.py $W/down_m${m}_sass.csv --top 12 >>$S 2>&1
done
rm -f $W/*.ncu-rep
xz -9 $W/*_sass.csv
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
