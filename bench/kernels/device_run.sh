#!/usr/bin/env bash
# Run THERE (device tool, carry ["gemv-bundle"], built by bench/kernels/bundle.sh).
#
# Stages, in this order, each optional and under its own time limit so the call ends inside the
# device budget; logs go to $OUT, a short summary is printed last:
#   --test F/B (repeatable): gpu_cuda_gemv_test with the fp8 kernel F and the bf16 kernel B
#       (LATHE_GEMV_TEST_VARIANT_*; "default/default" = the library's per-shape default).
#   --sweep LIST: lathe_bench_kernels --variants --shapes decode --variant-list LIST (the Qwen3
#       8B/32B decode-layer shapes, m = 1, 4, 16, every variant beside cuBLASLt/cuBLAS), then a
#       table of the best variant per (shape, dtype, m).
#   --pick-fp8 A,B / --pick-bf16 A,B: after the tests and the sweep, the candidate of each dtype
#       with the best sweep score (geometric mean of % of the read ceiling over the decode shapes,
#       m = 1 counted twice, m = 4 and 16 once) among those whose --test pair passed; "ring" (the
#       old default) when none did. The picks are what --bench then measures as "ours".
#   --bench: the full benchmark (ours = the picks, else the library default), with the old
#       default (ring) re-measured beside it at m = 1, 4, 16.
#   --probe "N K" (repeatable): lathe_probe_gemv_access on that fp8 weight shape (the ring's
#       access pattern without the arithmetic, beside a linear read of the same bytes).
#   --ncu SHAPE[:M[:VARIANT]] (repeatable): Nsight Compute's full section set for one fp8 launch of
#       our kernel (VARIANT, default "auto") and one of cuBLASLt FP8 on that shape (a
#       lathe_bench_kernels --only text, e.g. qwen3-8b/gate_up) at width M (default 1); the
#       reports go to $OUT/ncu_*.txt, the headline counters into the summary.
#
# Usage: bench/kernels/device_run.sh [--test F/B]... [--sweep LIST] [--pick-fp8 L] [--pick-bf16 L]
#                                    [--bench] [--ncu SHAPE[:M[:VARIANT]]]... [--test-s N] [--sweep-s N] [--bench-s N]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=$root/gemv-bundle
out=${OUT:-/tmp/gemv-out}
mkdir -p "$out"
tests=() ncu_targets=() probes=() sweep="" bench=0 test_s=40 sweep_s=100 bench_s=100 pick_fp8="" pick_bf16="" passed=" "
while [[ $# -gt 0 ]]; do
  case "$1" in
    --test) tests+=("$2"); shift ;;
    --sweep) sweep=$2; shift ;;
    --bench) bench=1 ;;
    --ncu) ncu_targets+=("$2"); shift ;;
    --probe) probes+=("$2"); shift ;;
    --pick-fp8) pick_fp8=$2; shift ;;
    --pick-bf16) pick_bf16=$2; shift ;;
    --test-s) test_s=$2; shift ;;
    --sweep-s) sweep_s=$2; shift ;;
    --bench-s) bench_s=$2; shift ;;
  esac
  shift
done
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
  echo "bundle: $(tr '\n' ' ' <"$bundle/COMMIT")"
} 2>&1 | tee "$out/device.txt"

i=0
for pair in "${tests[@]}"; do
  f=${pair%%/*} b=${pair##*/}
  start=$(date +%s)
  LATHE_GEMV_TEST_VARIANT_FP8=$f LATHE_GEMV_TEST_VARIANT_BF16=$b timeout "$test_s" "$bundle/bin/gpu_cuda_gemv_test" \
    >"$out/gemv_test_$i.txt" 2>&1
  rc=$?
  [[ $rc == 0 ]] && passed="$passed fp8=$f bf16=$b "
  echo "gemv_test fp8=$f bf16=$b rc=$rc ($(( $(date +%s) - start )) s): $(grep -E '^\[  PASSED  \]|^\[  FAILED  \] [0-9]+ test' "$out/gemv_test_$i.txt" | tr '\n' ' ')" \
    | tee -a "$out/device.txt"
  i=$((i + 1))
done

if [[ -n $sweep ]]; then
  start=$(date +%s)
  timeout "$sweep_s" "$bundle/bin/lathe_bench_kernels" --variants --shapes decode --variant-list "$sweep" \
    >"$out/variants.txt" 2>&1
  echo "sweep rc=$? ($(( $(date +%s) - start )) s)" | tee -a "$out/device.txt"
fi

# score DTYPE NAME: weighted geometric mean of the sweep's % for variant NAME (0 if absent).
score() {
  awk -v dt="$1" -v nm="v:$2" '$5 == dt && $7 == nm { pct = $NF; sub(/%/, "", pct); w = ($6 == 1) ? 2 : 1
      if (pct > 0) { s += w * log(pct); n += w } }
    END { printf "%.2f\n", (n > 0 ? exp(s / n) : 0) }' "$out/variants.txt" 2>/dev/null
}
pick() {  # DTYPE LIST -> best tested candidate, else ring
  local best=ring best_s=0 c sc
  for c in ${2//,/ }; do
    [[ $passed == *" $1=$c "* ]] || { echo "pick $1: $c not tested or failed" >&2; continue; }
    sc=$(score "$1" "$c")
    echo "pick $1: $c score $sc" >&2
    if awk -v a="$sc" -v b="$best_s" 'BEGIN { exit !(a > b) }'; then best=$c best_s=$sc; fi
  done
  echo "$best"
}
ours=()
if [[ -n $pick_fp8 ]]; then
  f=$(pick fp8 "$pick_fp8" 2>>"$out/device.txt")
  b=$(pick bf16 "$pick_bf16" 2>>"$out/device.txt")
  echo "picked fp8=$f bf16=$b" | tee -a "$out/device.txt"
  ours=(--variant-fp8 "$f" --variant-bf16 "$b")
fi

if [[ $bench == 1 ]]; then
  start=$(date +%s)
  timeout "$bench_s" "$bundle/bin/lathe_bench_kernels" "${ours[@]}" --out "$out" >"$out/bench_stdout.txt" 2>&1
  echo "bench rc=$? ($(( $(date +%s) - start )) s)" | tee -a "$out/device.txt"
fi

for shape in "${probes[@]}"; do
  # shellcheck disable=SC2086
  timeout 60 "$bundle/bin/lathe_probe_gemv_access" $shape >"$out/probe_${shape// /x}.txt" 2>&1
  echo "probe $shape rc=$?" | tee -a "$out/device.txt"
done

# Headline counters of an ncu details report: duration, DRAM throughput, issue activity, occupancy
# and the warp stall reasons (cycles per issued instruction) above 0.5.
ncu_headlines() {
  grep -E "^  [a-zA-Z_0-9<>:, ()]+\(|^    (Duration|DRAM Throughput|Memory Throughput|Issue Slots Busy|Issued Ipc Active|Achieved Occupancy|Registers Per Thread|No Eligible|Warp Cycles Per Issued Instruction|Active Warps Per Scheduler|Eligible Warps Per Scheduler|L2 Hit Rate|Mem Busy|Max Bandwidth|Grid Size|Block Size|Waves Per SM) " "$1" \
    | cut -c1-150
  grep -E "issue_stalled_" "$1" | awk '$NF + 0 >= 0.5 { sub(/smsp__average_warps_issue_stalled_/, "stall "); print }' | head -12
}
stalls=""
for r in barrier branch_resolving dispatch_stall drain imc_miss lg_throttle long_scoreboard math_pipe_throttle \
  membar mio_throttle misc no_instruction not_selected selected short_scoreboard sleeping tex_throttle wait; do
  stalls+="${stalls:+,}smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
done
command -v ncu >/dev/null || export PATH="$PATH:/usr/local/cuda/bin:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)"
for target in "${ncu_targets[@]}"; do
  IFS=: read -r shape width variant <<<"$target"
  width=${width:-1} variant=${variant:-auto}
  tag=$(echo "${shape}_m${width}_${variant}" | tr '/:()' '____')
  for who in ours peer; do
    if [[ $who == ours ]]; then
      args=(--variants --variant-list "$variant" --no-peers) filter='regex:gemv_kernel|stream_kernel'
    else
      args=(--variants --variant-list "$variant") filter='regex:nvjet|gemm|cutlass|xmma'
    fi
    start=$(date +%s)
    timeout 120 ncu --clock-control none --set full --metrics "$stalls" --kernel-name-base demangled -k "$filter" -s 4 -c 1 \
      --export "$out/ncu_${tag}_$who" \
      "$bundle/bin/lathe_bench_kernels" --shapes decode --only "$shape" --widths "$width" --dtype fp8 "${args[@]}" \
      >"$out/ncu_${tag}_$who.txt" 2>&1
    echo "ncu $shape m=$width $who ($variant) rc=$? ($(( $(date +%s) - start )) s)" | tee -a "$out/device.txt"
    # Per-SASS-instruction stall samples of our kernel (the source page), for reading here.
    if [[ $who == ours ]]; then
      ncu --import "$out/ncu_${tag}_$who.ncu-rep" --page source --print-source sass --csv >"$out/ncu_${tag}_sass.csv" 2>&1
      python3 "$root/bench/kernels/sass_stalls.py" "$out/ncu_${tag}_sass.csv" --top 10 >"$out/ncu_${tag}_sass_top.txt" 2>&1
    fi
    rm -f "$out/ncu_${tag}_$who.ncu-rep"
  done
done

for f in "$out"/probe_*.txt; do
  [[ -f $f ]] && { echo "== $(basename "$f")"; cat "$f"; }
done
for f in "$out"/ncu_*.txt; do
  [[ -f $f ]] || continue
  echo "== $(basename "$f")"
  if [[ $f == *_sass_top.txt ]]; then head -14 "$f"; else ncu_headlines "$f"; fi
done
for f in "$out"/gemv_test_*.txt; do
  [[ -f $f ]] || continue
  echo "== $f"; grep -E "^\[  FAILED  \]" "$f" | head -8
done
if [[ -n $sweep ]]; then
  grep -E "read ceiling|MISMATCH" "$out/variants.txt" | head -8
  echo "== sweep: per shape, dtype, m: ring %, best variant %, peer % (of the read ceiling)"
  awk '$7 ~ /^v:/ || $7 == "cublaslt" || $7 == "cublas" {
      key = $3 "x" $4 " " $5 " m=" $6; pct = $NF; sub(/%/, "", pct)
      if ($7 == "v:ring") ring[key] = pct
      else if ($7 ~ /^v:/) { if (!(key in best) || pct > best[key]) { best[key] = pct; name[key] = substr($7, 3) } }
      else peer[key] = pct
      if (!(key in seen)) { seen[key] = 1; order[++n] = key }
    }
    END { for (i = 1; i <= n; ++i) { k = order[i]; printf "%-22s ring %5.1f  best %-16s %5.1f  peer %5.1f\n", k, ring[k], name[k], best[k], peer[k] } }' \
    "$out/variants.txt"
fi
if [[ $bench == 1 ]]; then
  echo "== bench summary"
  grep -E "read ceiling|^ours" "$out/bench_stdout.txt"
  sed -n '/^summary/,$p' "$out/bench_stdout.txt" | head -45
fi
cat "$out/device.txt"
