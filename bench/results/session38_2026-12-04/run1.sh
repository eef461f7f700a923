#!/usr/bin/env bash
# Session 38, call 1 (perf-bundle at 1855880: main at the session's start). (1) the test race fix
# of 17fae95 under load: six concurrent processes repeat Determinism.GraphReplayReadsDeviceLengths
# 20 times each; (2) compute-sanitizer (memcheck, racecheck, synccheck) on the serve kernels 25 / 26;
# (3) Nsight Compute on the batch-16 4k cells and the batch-1 64k cell (split kernel and reduce
# apart: durations, DRAM throughput, SM active cycles min / avg / max); (4) batch-1 slice sweep
# under 24 and 26; (5) batch 16 at 4k, shuffled vs sequential block tables.
#   scripts/device-bundle.sh -j 4 --targets "gpu_attention lathe_bench_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
export PATH="$PATH:/usr/local/cuda/bin:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)"
S=$OUT/summary.txt; W=/tmp/s38c1; rm -rf $W; mkdir -p $W/attn
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
B=$b/bin/lathe_bench_attention
# (1) the race, six processes at once
for s in 0 1 2 3 4 5; do
  timeout 150 $b/bin/gpu_attention --gtest_filter='Determinism.GraphReplayReadsDeviceLengths' --gtest_repeat=20 \
    >$W/race_$s.txt 2>&1 &
done
wait
for s in 0 1 2 3 4 5; do
  echo "race proc $s: passed $(grep -c '^\[       OK \]' $W/race_$s.txt) failed $(grep -c '^\[  FAILED  \] Determinism' $W/race_$s.txt)" >>$S
done
echo "race done $((SECONDS - t0))s" >>$S
# (2) sanitizers, in parallel
EA=Shapes/DecodeArms.EveryArmMatchesTheReference
cases="$EA/*nq32_nkv8_hd128:$EA/*nq24_nkv4_hd256"
run_san() {  # tool variant
  LATHE_ATTN_SPLITK_KERNEL=$2 timeout 200 compute-sanitizer --tool $1 --error-exitcode 9 $b/bin/gpu_attention \
    --gtest_filter="$cases" >$W/san_$1_k$2.txt 2>&1
  echo "$1 k$2 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/san_$1_k$2.txt | head -1) $(grep -E '^\[  (PASSED|FAILED)' $W/san_$1_k$2.txt | tr '\n' ' ')" >>$S
}
for v in 25 26; do for t in memcheck racecheck synccheck; do run_san $t $v & done; done
wait
echo "sanitizers done $((SECONDS - t0))s" >>$S
# (3) ncu: the split kernel and the reduce of single cells
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__registers_per_thread,smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct,smsp__issue_active.avg.pct_of_peak_sustained_active
prof() {  # name, bench args...
  local n=$1; shift
  timeout 120 ncu --clock-control none --kernel-name-base function -k regex:splitk -c 4 --metrics $M \
    $B "$@" --policies auto+pack --dtypes bf16 >$W/ncu_$n.txt 2>&1
  echo "ncu $n rc=$? $((SECONDS - t0))s" >>$S
  grep -E "paged_decode|splitk_reduce|gpu__time|dram__th|sm__cycles_active|launch__grid|warps_active|stalled|issue_active" $W/ncu_$n.txt | head -40 >>$S
}
prof b16_4k_32 --shapes 32/8/128 --batches 16 --contexts 4096
prof b16_4k_64 --shapes 64/8/128 --batches 16 --contexts 4096
prof b16_4k_24 --shapes 24/4/256 --batches 16 --contexts 4096
# (4) batch-1 slices under 24 (three CTAs per SM) and 26 (one)
timeout 100 $B --out $W/attn --kernels 24,26 --policies auto+pack+slices --slices 1,2,3,4 --batches 1 \
  --contexts 16384,65536 --dtypes bf16 >$W/b1_slices.txt 2>&1
echo "== b1 slices rc=$? $((SECONDS - t0))s" >>$S
grep -hE '^[0-9]' $W/b1_slices.txt | awk '{print $1,$3,$4,$5,"sl"$10,$13,$14,$18,$20}' >>$S
# (5) batch 16 at 4k: block tables shuffled / sequential, kernels 25 and 14
for t in shuffled sequential; do
  timeout 100 $B --kernels 25,14 --policies auto+pack --batches 16 --contexts 4096,16384 --dtypes bf16 --tables $t \
    >$W/b16_$t.txt 2>&1
  echo "== b16 tables $t rc=$? $((SECONDS - t0))s" >>$S
  grep -hE '^[0-9]' $W/b16_$t.txt | awk '{print $1,$3,$4,$5,$13,$14,$18,$20}' >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
