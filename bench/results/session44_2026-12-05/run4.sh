#!/usr/bin/env bash
# Session 44, call 4 (H100; perf-bundle of main d94e795, whose src/ = ebda34e):
# (1) the fp8 and bf16 decode-width table with its peers (cuBLASLt FP8, cuBLAS BF16) on the H100,
#     Qwen3-8B and Qwen3-32B shapes at 1, 4, 16, 32 rows;
# (2) Nsight Compute's per-instruction stall view (session 41's run6.sh) of the 16-row fp8 launch on
#     Qwen3-8B down (where natural x staging gained most in calls 1-2) and gate|up.
#   scripts/device-bundle.sh -j 2 --bundle perf-bundle --targets "lathe gpu_golden_qwen3 lathe_bench_kernels" --with-tokenizer --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-perf-bundle}"
for dt in fp8 bf16; do
  timeout 150 $b/bin/lathe_bench_kernels --only qwen3- --widths 1,4,16,32 --dtype $dt >$W/table_$dt.txt 2>&1
  echo "table $dt rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $W/table_$dt.txt | head -1 | cut -c1-60)" >>$S
done
for shape in qwen3-8b/down qwen3-8b/gate; do
  (( SECONDS - t0 > 420 )) && break
  f=$W/ncu_${shape//\//_}_m16.txt
  timeout $((540 - (SECONDS - t0))) ncu --clock-control none --kernel-name-base mangled \
    -k regex:gemv_kernelILi16 -s 3 -c 1 --section SourceCounters --section WarpStateStats \
    --section SchedulerStats --section MemoryWorkloadAnalysis_Tables --print-details all \
    $b/bin/lathe_bench_kernels --variants --variant-list auto:wg --no-peers --only $shape --widths 16 \
    --dtype fp8 >$f 2>&1
  echo "ncu $shape m=16 auto:wg rc=$? $((SECONDS - t0))s" >>$S
  grep -iE "stall|warp cycles|scoreboard|barrier|issued" $f | head -24 >>$S
done
cp $W/table_fp8.txt $W/table_bf16.txt $OUT/ 2>/dev/null
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
