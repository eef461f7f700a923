#!/usr/bin/env bash
# Session 42, call 4, on main's code (ebda34e's sources; the session's two GEMV experiments
# reverted): (1) the served determinism check the 32-row default (session 41) has not had:
# `scripts/device-perf.sh --steps determinism` (Qwen3-8B-FP8, decode graphs on, a request alone =
# beside 31 others, and on a second server with preemptions and 64-token steps); (2) if time is
# left, Nsight Compute's per-instruction stall sampling of the Qwen3-8B gate|up fp8 launch at 16
# rows (session 41's run6.sh, one width).
#   scripts/device-bundle.sh -j 2 --bundle perf-bundle --targets "lathe gpu_golden_qwen3 lathe_bench_kernels" --with-tokenizer --xz
set -uo pipefail
t0=$SECONDS
bash scripts/device-perf.sh --steps "determinism"
S=$OUT/summary.txt
b=$PWD/perf-bundle
if (( SECONDS - t0 < 400 )); then
  timeout $((540 - (SECONDS - t0))) ncu --clock-control none --kernel-name-base mangled \
    -k regex:gemv_kernelILi16 -s 3 -c 1 --section SourceCounters --section WarpStateStats \
    --section SchedulerStats --print-details all \
    $b/bin/lathe_bench_kernels --variants --variant-list auto --no-peers --only qwen3-8b/gate --widths 16 \
    --dtype fp8 >$OUT/ncu_src_m16.txt 2>&1
  echo "ncu source view m=16 rc=$? $((SECONDS - t0))s" >>$S
  grep -iE "stall|warp cycles|L1TEX|scoreboard|barrier|issued" $OUT/ncu_src_m16.txt | head -40 >>$S
fi
cat $S
