#!/usr/bin/env bash
# Run THERE (device tool, carry ["gemv-bundle"], built by bench/kernels/bundle.sh): the GEMV
# test, then (optionally) the variant comparison, then the full kernel benchmark. Logs go to
# $OUT; a short summary is printed last. Each stage has its own time limit so the call ends
# inside the device budget (240 s).
#
# Usage: bench/kernels/device_run.sh [--variants] [--test-s N] [--variants-s N] [--bench-s N]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=$root/gemv-bundle
out=${OUT:-/tmp/gemv-out}
mkdir -p "$out"
variants=0 test_s=50 variants_s=90 bench_s=120
while [[ $# -gt 0 ]]; do
  case "$1" in
    --variants) variants=1 ;;
    --test-s) test_s=$2; shift ;;
    --variants-s) variants_s=$2; shift ;;
    --bench-s) bench_s=$2; shift ;;
  esac
  shift
done
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
  echo "bundle: $(cat "$bundle/COMMIT" | tr '\n' ' ')"
} 2>&1 | tee "$out/device.txt"
start=$(date +%s)
timeout "$test_s" "$bundle/bin/gpu_cuda_gemv_test" >"$out/gemv_test.txt" 2>&1
echo "gemv_test rc=$? ($(( $(date +%s) - start )) s)" | tee -a "$out/device.txt"
if [[ $variants == 1 ]]; then
  mkdir -p "$out/variants"
  start=$(date +%s)
  timeout "$variants_s" "$bundle/bin/lathe_bench_kernels" --variants --out "$out/variants" >"$out/variants.txt" 2>&1
  echo "variants rc=$? ($(( $(date +%s) - start )) s)" | tee -a "$out/device.txt"
fi
start=$(date +%s)
timeout "$bench_s" "$bundle/bin/lathe_bench_kernels" --out "$out" >"$out/bench_stdout.txt" 2>&1
echo "bench rc=$? ($(( $(date +%s) - start )) s)" | tee -a "$out/device.txt"
echo "== test"
grep -E "^\[  (PASSED|FAILED) |FAILED|tests ran" "$out/gemv_test.txt" | head -20
if [[ $variants == 1 ]]; then
  echo "== variants (fp8, % of ceiling)"
  grep -E "read ceiling" "$out/variants.txt"
  awk '$5 == "fp8" && ($6 == 1 || $6 == 16) { pct = $NF; impl = ""; for (i = 7; i <= NF - 3; ++i) if ($i !~ /^err=/) impl = impl " " $i; printf "%s %s m=%s%s %s\n", $2, $3 "x" $4, $6, impl, pct }' "$out/variants.txt" | sed 's/gemv_batch16\|gemv_batch4\|gemv //' | head -150
  grep -E "MISMATCH" "$out/variants.txt" | head -5
fi
echo "== bench summary"
sed -n '/^summary/,$p' "$out/bench_stdout.txt" | head -45
