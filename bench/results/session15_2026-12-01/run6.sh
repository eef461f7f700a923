#!/usr/bin/env bash
# Session 15, call 6: Nsight Compute of the decode GEMV (auto) on 8B gate|up and down at m = 16 and 1.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
command -v ncu >/dev/null || export PATH="$PATH:/usr/local/cuda/bin:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)"
W=/tmp/work; mkdir -p $W/ncu
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $S
cat $b/COMMIT >>$S
for target in gate_up:16 down:16 gate_up:1; do
  shape=${target%%:*} m=${target##*:}
  tag=${shape}_m$m
  t=$SECONDS
  timeout 150 ncu --clock-control none --set full --kernel-name-base demangled -k regex:gemv_kernel -s 4 -c 1 \
    --export $W/ncu/$tag $b/bin/lathe_bench_kernels --variants --variant-list auto --no-peers --shapes decode \
    --only qwen3-8b/$shape --widths $m --dtype fp8 >$W/ncu/${tag}_run.txt 2>&1
  echo "ncu $tag rc=$? $((SECONDS-t))s" >>$S
  ncu --import $W/ncu/$tag.ncu-rep --page details >$W/ncu/${tag}_details.txt 2>&1
  ncu --import $W/ncu/$tag.ncu-rep --page source --print-source sass --csv 2>/dev/null | gzip -9 >$W/ncu/${tag}_sass.csv.gz
  rm -f $W/ncu/$tag.ncu-rep
  grep -E "^    (Duration|DRAM Throughput|Memory Throughput|Issue Slots Busy|Issued Ipc Active|Achieved Occupancy|Registers Per Thread|No Eligible|Warp Cycles Per Issued Instruction|Active Warps Per Scheduler|Eligible Warps Per Scheduler|L2 Hit Rate|L1/TEX Hit Rate|Mem Busy|Max Bandwidth|Grid Size|Shared Memory Configuration Size|Dynamic Shared|Static Shared|Mem Pipes Busy|SM Busy)" $W/ncu/${tag}_details.txt | sed "s/^/$tag /" >>$S
done
tar czf $OUT/work.tgz -C $W ncu
cat $S
