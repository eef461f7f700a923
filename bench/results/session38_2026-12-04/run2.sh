#!/usr/bin/env bash
# Session 38, call 2 (perf-bundle at 1855880). Where the serve kernels' warps wait: Nsight Compute
# full sets with per-instruction stall samples on 25 (batch 16, 4k, 32/8/128, the persistent grid)
# and 26 (batch 1, 64k, 32/8/128); their SASS; synccheck of the FP8 position-row kernels with room
# for every mbarrier (call 1's synccheck ran out of tracked barriers).
#   scripts/device-bundle.sh -j 4 --targets "gpu_attention lathe_bench_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
export PATH="$PATH:/usr/local/cuda/bin:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)"
S=$OUT/summary.txt; W=/tmp/s38c2; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
ncu --version | tail -1 >>$S
t0=$SECONDS
B=$b/bin/lathe_bench_attention
EA=Shapes/DecodeArms.EveryArmMatchesTheReference
LATHE_ATTN_SPLITK_KERNEL=26 timeout 200 compute-sanitizer --tool synccheck --num-cuda-barriers 1000000 --error-exitcode 9 \
  $b/bin/gpu_attention --gtest_filter="$EA/fp8_nq32_nkv8_hd128" >$W/synccheck_k26.txt 2>&1 &
prof() {  # name regex bench-args...
  local n=$1 k=$2; shift 2
  timeout 150 ncu --clock-control none --set full --import-source no --kernel-name-base function -k regex:$k -c 1 \
    --metrics sm__cycles_elapsed.avg.per_second -o $W/$n $B "$@" --policies auto+pack --dtypes bf16 >$W/ncu_$n.log 2>&1
  echo "ncu $n rc=$? $((SECONDS - t0))s" >>$S
  ncu -i $W/$n.ncu-rep --page details >$W/$n.details.txt 2>&1
  ncu -i $W/$n.ncu-rep --page source --csv --print-source sass >$W/$n.source.csv 2>$W/$n.source.err
  echo "source page rc=$? lines $(wc -l <$W/$n.source.csv)" >>$S
  grep -E "SM Frequency|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Eligible Warps" \
    $W/$n.details.txt | head -20 >>$S
}
prof p25_b16_4k persistent --shapes 32/8/128 --batches 16 --contexts 4096 --kernels 25
prof p26_b1_64k paged_decode_splitk_mma --shapes 32/8/128 --batches 1 --contexts 65536 --kernels 26
cuobjdump -sass $B >$W/all.sass 2>/dev/null
for f in persistentINS1_6Bf16KvELi128ENS2_8SplitCfgILi4ELi2ELi16ELi3ELb1ELi1ELb0ELb1ELb1E \
  mmaINS1_6Bf16KvELi128ENS2_8SplitCfgILi12ELi2ELi16ELi1ELb1ELi1ELb0ELb1ELb1E; do
  awk -v f=$f '/Function :/ {keep = index($0, f) > 0} keep' $W/all.sass >$W/sass_${f:0:12}.txt
  echo "sass $f lines $(wc -l <$W/sass_${f:0:12}.txt)" >>$S
done
rm -f $W/all.sass
wait
echo "synccheck k26 fp8: $(grep -E 'ERROR SUMMARY' $W/synccheck_k26.txt) $(grep -E '^\[  (PASSED|FAILED)' $W/synccheck_k26.txt | tr '\n' ' ')" >>$S
grep -E "Warning|Barrier|barrier" $W/synccheck_k26.txt | head -5 >>$S
tar -C $W -cJf $OUT/work.tar.xz --exclude='*.ncu-rep' .
cp $W/*.ncu-rep $OUT/ 2>/dev/null
cat $S
