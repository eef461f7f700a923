#!/usr/bin/env bash
# Session 68, second call (bundle p67b-bundle = 7fcfe7d's code, built with lathe_bench_attention and
# lathe_bench_kernels too). On an H200 (the issues' device, unmeasured since sessions 48 and 50):
# session 67's run2.sh as it is (the whole kernel table with cuBLASLt FP8 and cuBLAS BF16, the decode
# steps of Qwen3-8B-FP8, Qwen3-8B and Qwen3-32B-FP8 at batch 1 / 4 / 16 / 32). On an H100 (whose
# tables sessions 63, 65 and 67 measured): Nsight Compute on the batch-1 cells at 16k that the issue-5
# target misses (FP8 54-65% of the read ceiling, BF16 73-76%), one split-K + reduce pair each:
# durations, grid, DRAM throughput, warp stall reasons. From sessions 65-67's tables a batch-1 pair
# costs a fixed ~5 us beside a ~93%-of-ceiling stream; this says how much of it is the reduce.
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  BUNDLE=${BUNDLE:-p67b-bundle} exec bash bench/results/session67_2026-12-07/run2.sh
fi
source scripts/bundle-env.sh "${BUNDLE:-p67b-bundle}"
rm -rf "$W"
W=$(mktemp -d)  # outside $OUT: $OUT/work.tar.xz carries it
command -v ncu >/dev/null ||
  export PATH="$PATH:/usr/local/cuda/bin:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)"
stalls=""
for r in barrier long_scoreboard math_pipe_throttle mio_throttle no_instruction not_selected selected \
  short_scoreboard wait lg_throttle membar drain; do
  stalls+="${stalls:+,}smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
done
# The same cells timed by the benchmark first (graph-replayed pairs, no profiler), for the pair's µs.
timeout 120 "$b/bin/lathe_bench_attention" --kernels serve --policies auto+pack \
  --shapes 32/8/128,24/4/256,64/8/128 --dtypes bf16,fp8 --batches 1 --contexts 16384,65536 \
  >"$W/b1_bench.txt" 2>&1
echo "b1 bench rc=$? $((SECONDS - t0))s" >>"$S"
grep -E "GB/s|ceiling" "$W/b1_bench.txt" | head -20 | cut -c1-160 >>"$S"
for c in 32/8/128:fp8 32/8/128:bf16 24/4/256:fp8 64/8/128:fp8; do
  IFS=: read -r shape dtype <<<"$c"
  tag="prof_$(echo "$shape" | tr / _)_${dtype}_b1_l16k"
  timeout 120 ncu --clock-control none --cache-control none --set full --metrics "$stalls" \
    --kernel-name-base demangled -k regex:splitk -s 4 -c 2 --export "$W/$tag" \
    "$b/bin/lathe_bench_attention" --kernels serve --policies auto+pack --shapes "$shape" \
    --dtypes "$dtype" --batches 1 --contexts 16384 >"$W/$tag.txt" 2>&1
  echo "== $c rc=$? $((SECONDS - t0))s" >>"$S"
  ncu --import "$W/$tag.ncu-rep" --page details >>"$W/$tag.txt" 2>&1
  grep -E "^  [a-zA-Z_0-9:]+.*\(|^    (Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per Thread|Warp Cycles Per Issued Instruction|Eligible Warps Per Scheduler|Grid Size|Block Size|Waves Per SM|Dynamic Shared Memory Per Block) " \
    "$W/$tag.txt" | cut -c1-110 >>"$S"
  grep -E "issue_stalled_" "$W/$tag.txt" | awk '$NF + 0 >= 0.3 { sub(/smsp__average_warps_issue_stalled_/, "stall "); print }' |
    cut -c1-110 | head -24 >>"$S"
  rm -f "$W/$tag.ncu-rep"
  tar -C "$W" -cJf "$OUT/work.tar.xz" .
done
cat "$S"
