#!/usr/bin/env bash
# Session 65, call 5 (bundle p64b-bundle = main 344dbcb's code). On an H200 (the issues' device):
# session 64's run2.sh as it is (gpu_attention, golden, batch invariance, the issue-5 tables with
# SDPA, 24 against 25 at batch 16-64, session 63's GEMV tables and decode steps). On an H100 (three
# runs of those tables this session already): Nsight Compute on the wide serve's split-K kernel and
# its reduce where the SDPA rule fails widest (64/8/128 batch 16 and 64 at 1k; 32/8/128 batch 16 at
# 1k), one launch pair each: durations, DRAM throughput, warp stall reasons.
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  exec bash bench/results/session64_2026-12-07/run2.sh
fi
source scripts/bundle-env.sh "${BUNDLE:-p64b-bundle}"
command -v ncu >/dev/null ||
  export PATH="$PATH:/usr/local/cuda/bin:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)"
stalls=""
for r in barrier long_scoreboard math_pipe_throttle mio_throttle no_instruction not_selected selected \
  short_scoreboard wait lg_throttle branch_resolving dispatch_stall; do
  stalls+="${stalls:+,}smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
done
for c in 64/8/128:16:1024 64/8/128:64:1024 32/8/128:16:1024; do
  IFS=: read -r shape batch ctx <<<"$c"
  tag="prof_$(echo "$shape" | tr / _)_b${batch}_l$ctx"
  timeout 120 ncu --clock-control none --cache-control none --set full --metrics "$stalls" \
    --kernel-name-base demangled -k regex:splitk -s 4 -c 2 --export "$W/$tag" \
    "$b/bin/lathe_bench_attention" --kernels serve --policies auto+pack --shapes "$shape" --dtypes bf16 \
    --batches "$batch" --contexts "$ctx" >"$W/$tag.txt" 2>&1
  echo "== $c rc=$? $((SECONDS - t0))s" >>"$S"
  ncu --import "$W/$tag.ncu-rep" --page details >>"$W/$tag.txt" 2>&1
  grep -E "^  [a-zA-Z_0-9:]+.*\(|^    (Duration|DRAM Throughput|Issue Slots Busy|Achieved Occupancy|Registers Per Thread|Warp Cycles Per Issued Instruction|Eligible Warps Per Scheduler|L2 Hit Rate|Grid Size|Block Size|Waves Per SM) " \
    "$W/$tag.txt" | cut -c1-110 >>"$S"
  grep -E "issue_stalled_" "$W/$tag.txt" | awk '$NF + 0 >= 0.3 { sub(/smsp__average_warps_issue_stalled_/, "stall "); print }' |
    cut -c1-110 | head -24 >>"$S"
  rm -f "$W/$tag.ncu-rep"
done
tar -C "$W" -cJf "$OUT/work.tar.xz" .
cat "$S"
