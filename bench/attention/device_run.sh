#!/usr/bin/env bash
# Run THERE (device tool) from the repository root, with carry ["attn-bundle"] built here by
# bench/attention/bundle.sh. Runs the attention GPU tests, a compute-sanitizer pass over a small
# subset, the attention benchmark and the PyTorch SDPA peer in one session; logs go to $OUT and a
# short summary is printed last.
#
# Usage: bench/attention/device_run.sh [--quick] [--no-bench] [--no-sdpa] [--filter GTEST_FILTER]
# Environment: ATTN_TEST_TIMEOUT / ATTN_BENCH_TIMEOUT / ATTN_SDPA_TIMEOUT (seconds), ATTN_NO_SANITIZER=1.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bundle=$root/attn-bundle
out=${OUT:-/tmp/attn-out}
mkdir -p "$out"
quick="" bench=1 sdpa=1 filter="*"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick="--quick" ;;
    --no-bench) bench=0 ;;
    --no-sdpa) sdpa=0 ;;
    --filter) filter=$2; shift ;;
  esac
  shift
done
export LD_LIBRARY_PATH="$bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
summary=$out/attn_summary.txt
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
  echo "bundle commit: $(cat "$bundle/COMMIT" 2>/dev/null)"
  for b in "$bundle"/bin/*; do ldd "$b" | grep "not found" | sed "s|^|$(basename "$b"): |"; done
  [[ -x $bundle/bin/lathe ]] && "$bundle/bin/lathe" info
} >"$summary" 2>&1

start=$SECONDS
timeout "${ATTN_TEST_TIMEOUT:-120}" "$bundle/bin/gpu_attention" --gtest_filter="$filter" >"$out/attn_tests.log" 2>&1
echo "gpu_attention rc=$? $((SECONDS - start))s" >>"$summary"
grep -E '^\[  (PASSED|FAILED)  \]|^\[  FAILED  \]' "$out/attn_tests.log" >>"$summary"
grep -B2 -A8 'Failure' "$out/attn_tests.log" | head -60 >>"$summary"

if [[ -z "${ATTN_NO_SANITIZER:-}" ]] && command -v compute-sanitizer >/dev/null; then
  start=$SECONDS
  for tool in memcheck; do
    timeout 30 compute-sanitizer --tool $tool --error-exitcode 9 "$bundle/bin/gpu_attention" \
      --gtest_filter='Shapes/Prefill.MatchesTheReference/bf16_nq8_nkv2_hd128:Shapes/DecodeArms.EveryArmMatchesTheReference/fp8_nq16_nkv4_hd256' \
      >"$out/attn_sanitizer_$tool.log" 2>&1
    echo "compute-sanitizer $tool rc=$? ($((SECONDS - start))s): $(grep -E 'ERROR SUMMARY|hazard' "$out/attn_sanitizer_$tool.log" | tail -1)" >>"$summary"
  done
fi

if [[ $bench == 1 ]]; then
  start=$SECONDS
  timeout "${ATTN_BENCH_TIMEOUT:-90}" "$bundle/bin/lathe_bench_attention" --out "$out" $quick >"$out/attn_bench.log" 2>&1
  echo "lathe_bench_attention rc=$? $((SECONDS - start))s" >>"$summary"
fi
if [[ $sdpa == 1 ]]; then
  start=$SECONDS
  PYTHONUNBUFFERED=1 timeout "${ATTN_SDPA_TIMEOUT:-40}" python3 "$root/tools/peers/sdpa_decode.py" --out "$out/sdpa.csv" $quick \
    >"$out/sdpa.log" 2>&1
  echo "sdpa_decode.py rc=$? $((SECONDS - start))s" >>"$summary"
fi
echo "== bench: ceiling and auto rows (full table in attn_bench.log / attention_bench.csv)"
grep -E 'ceiling' "$out/attn_bench.log" 2>/dev/null
grep -E ' auto ' "$out/attn_bench.log" 2>/dev/null | awk '{print $1, $2, $3, $4, $7, $8, $9, $11, $13}' | head -100
echo "== summary"
cat "$summary"
