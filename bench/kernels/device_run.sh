#!/usr/bin/env bash
# Run THERE (device tool, carry ["gemv-bundle"], built by bench/kernels/bundle.sh).
#
# Plain: the GEMV test, then the full kernel benchmark, both on the library's default kernels.
# --variants: first every kernel variant side by side (lathe_bench_kernels --variants), then the
# best variant per weight dtype (geometric mean of % of the read ceiling over every shape at
# m = 1, 4, 16; variants whose output disagreed with the register ring are excluded) is run
# through the GEMV test (LATHE_GEMV_TEST_VARIANT_*) and, if it passes, measured by the full
# benchmark; a failing pick falls back to the next one. Logs go to $OUT; a short summary is
# printed last. Each stage has its own time limit so the call ends inside the device budget.
#
# Usage: bench/kernels/device_run.sh [--variants] [--test-s N] [--variants-s N] [--risky-s N] [--bench-s N]
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=$root/gemv-bundle
out=${OUT:-/tmp/gemv-out}
mkdir -p "$out"
variants=0 test_s=30 variants_s=85 risky_s=30 bench_s=80
safe_list=ring,ringbal,stream,stream:s3,stream:r512,stream:s2:c256
risky_list=stream:tma
while [[ $# -gt 0 ]]; do
  case "$1" in
    --variants) variants=1 ;;
    --test-s) test_s=$2; shift ;;
    --variants-s) variants_s=$2; shift ;;
    --risky-s) risky_s=$2; shift ;;
    --bench-s) bench_s=$2; shift ;;
  esac
  shift
done
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
  echo "bundle: $(tr '\n' ' ' <"$bundle/COMMIT")"
} 2>&1 | tee "$out/device.txt"

# Variant names of one dtype, best first: "name geomean%".
rank() {
  awk -v dt="$1" '$5 == dt && $7 ~ /^v:/ {
      name = substr($7, 3); pct = $NF; sub(/%/, "", pct)
      if ($0 ~ /MISMATCH/) bad[name] = 1
      if (pct > 0) { s[name] += log(pct); n[name]++ }
    }
    END { for (k in s) if (!(k in bad)) printf "%s %.1f\n", k, exp(s[k] / n[k]) }' "$out/variants.txt" | sort -k2 -nr
}

pick_fp8=default pick_bf16=default
if [[ $variants == 1 ]]; then
  # The newest variants run in a process of their own: a fault there cannot cost the others.
  start=$(date +%s)
  timeout "$variants_s" "$bundle/bin/lathe_bench_kernels" --variants --variant-list "$safe_list" >"$out/variants.txt" 2>&1
  echo "variants ($safe_list) rc=$? ($(( $(date +%s) - start )) s)" | tee -a "$out/device.txt"
  start=$(date +%s)
  timeout "$risky_s" "$bundle/bin/lathe_bench_kernels" --variants --no-peers --variant-list "$risky_list" \
    >"$out/variants2.txt" 2>&1
  echo "variants ($risky_list) rc=$? ($(( $(date +%s) - start )) s)" | tee -a "$out/device.txt"
  cat "$out/variants2.txt" >>"$out/variants.txt"
  rank fp8 >"$out/rank_fp8.txt"
  rank bf16 >"$out/rank_bf16.txt"
fi

run_test() {  # fp8 variant, bf16 variant -> rc
  local start rc
  start=$(date +%s)
  LATHE_GEMV_TEST_VARIANT_FP8=$1 LATHE_GEMV_TEST_VARIANT_BF16=$2 timeout "$test_s" "$bundle/bin/gpu_cuda_gemv_test" \
    >"$out/gemv_test.txt" 2>&1
  rc=$?
  echo "gemv_test fp8=$1 bf16=$2 rc=$rc ($(( $(date +%s) - start )) s)" | tee -a "$out/device.txt"
  return $rc
}

if [[ $variants == 1 ]]; then
  mapfile -t c8 < <(awk '{print $1}' "$out/rank_fp8.txt")
  mapfile -t c16 < <(awk '{print $1}' "$out/rank_bf16.txt")
  ok=0
  for i in 0 1 2; do
    f=${c8[$i]:-default} b=${c16[$i]:-default}
    if run_test "$f" "$b"; then pick_fp8=$f pick_bf16=$b ok=1; break; fi
  done
  [[ $ok == 1 ]] || run_test default default
else
  run_test default default
fi

start=$(date +%s)
timeout "$bench_s" "$bundle/bin/lathe_bench_kernels" --variant-fp8 "$pick_fp8" --variant-bf16 "$pick_bf16" --out "$out" \
  >"$out/bench_stdout.txt" 2>&1
echo "bench fp8=$pick_fp8 bf16=$pick_bf16 rc=$? ($(( $(date +%s) - start )) s)" | tee -a "$out/device.txt"

echo "== test"
grep -E "^\[  (PASSED|FAILED) |tests ran" "$out/gemv_test.txt" | head -20
if [[ $variants == 1 ]]; then
  echo "== variant ranking (geomean % of read ceiling, m = 1, 4, 16)"
  echo "fp8:"; cat "$out/rank_fp8.txt"
  echo "bf16:"; cat "$out/rank_bf16.txt"
  grep -E "MISMATCH" "$out/variants.txt" | head -5
  echo "== fp8 variants at m=1 / m=16 (% of ceiling)"
  awk '$5 == "fp8" && ($6 == 1 || $6 == 16) && ($7 ~ /^v:/ || $7 == "cublaslt") { printf "%s %s m=%s %s %s\n", $2, $3 "x" $4, $6, $7, $NF }' \
    "$out/variants.txt" | head -170
fi
echo "== bench summary"
grep -E "read ceiling|^ours" "$out/bench_stdout.txt"
sed -n '/^summary/,$p' "$out/bench_stdout.txt" | head -45
cat "$out/device.txt"
