#!/usr/bin/env bash
# Run THERE (device tool) from the repository root, with carry ["attn-bundle"] built here by
# bench/attention/bundle.sh. Runs the attention GPU tests, a compute-sanitizer pass over a small
# subset, the attention benchmark and the PyTorch SDPA peer in one session; logs go to $OUT and a
# short summary is printed last.
#
# Usage: bench/attention/device_run.sh [--quick] [--no-bench] [--no-sdpa] [--filter GTEST_FILTER]
# Environment: ATTN_TEST_TIMEOUT / ATTN_BENCH_TIMEOUT / ATTN_SDPA_TIMEOUT (seconds), ATTN_NO_SANITIZER=1,
#   ATTN_BENCH_ARGS (extra benchmark arguments, e.g. "--kernels 0,1,1p --policies auto+pack"),
#   ATTN_VARIANT_TESTS (e.g. "0 2 3": the GPU tests again, less Prefill and GqaPacked, which take no
#   split-K launch, under each listed split-K kernel variant: LATHE_ATTN_SPLITK_KERNEL).
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
for z in "$bundle"/bin/*.gz; do [[ -e $z ]] && gunzip -f "$z"; done  # bundle.sh gzips them
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

for v in ${ATTN_VARIANT_TESTS:-}; do
  start=$SECONDS
  LATHE_ATTN_SPLITK_KERNEL=$v timeout "${ATTN_VARIANT_TIMEOUT:-50}" "$bundle/bin/gpu_attention" \
    --gtest_filter='-Shapes/Prefill.*:GqaPacked.*' >"$out/attn_tests_k$v.log" 2>&1
  echo "gpu_attention split tests, kernel $v: rc=$? $((SECONDS - start))s $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/attn_tests_k$v.log" | tr '\n' ' ')" >>"$summary"
  grep -B2 -A8 'Failure' "$out/attn_tests_k$v.log" | head -20 >>"$summary"
done

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
  # shellcheck disable=SC2086
  timeout "${ATTN_BENCH_TIMEOUT:-90}" "$bundle/bin/lathe_bench_attention" --out "$out" $quick ${ATTN_BENCH_ARGS:-} >"$out/attn_bench.log" 2>&1
  echo "lathe_bench_attention rc=$? $((SECONDS - start))s" >>"$summary"
fi
if [[ $sdpa == 1 ]]; then
  start=$SECONDS
  PYTHONUNBUFFERED=1 timeout "${ATTN_SDPA_TIMEOUT:-40}" python3 "$root/tools/peers/sdpa_decode.py" --out "$out/sdpa.csv" $quick \
    >"$out/sdpa.log" 2>&1
  echo "sdpa_decode.py rc=$? $((SECONDS - start))s" >>"$summary"
fi
# End-to-end decode step under each listed split-K variant (ATTN_LATENCY_VARIANTS, e.g. "5 11";
# needs lathe in the bundle: ATTN_BUNDLE_LATHE=1 bench/attention/bundle.sh), Qwen3-8B-FP8 shape,
# dummy weights, at 1k context (batch 1, 4) and 16k (batch 1); two rounds, alternated.
if [[ -n "${ATTN_LATENCY_VARIANTS:-}" && -x $bundle/bin/lathe ]]; then
  for round in 1 2; do
    for v in $ATTN_LATENCY_VARIANTS; do
      for case in "1024 1,4" "16384 1"; do
        set -- $case
        name="latency_k${v}_in$1_r$round"
        LATHE_ATTN_SPLITK_KERNEL=$v timeout 90 "$bundle/bin/lathe" bench latency "$root/configs/Qwen3-8B-FP8" \
          --load-format dummy --device cuda --input-len "$1" --output-len 32 --batch-sizes "$2" \
          --out "$out/$name.json" >"$out/$name.txt" 2>"$out/$name.log"
        echo "$name rc=$?: $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' "$out/$name.txt")" >>"$summary"
      done
    done
  done
fi
echo "== bench: ceiling and auto rows (full table in attn_bench.log / attention_bench.csv)"
grep -E 'ceiling' "$out/attn_bench.log" 2>/dev/null
# Pivot of the split-K rows: per (shape, kv, B, L, policy) the % of ceiling of each kernel variant.
awk '$5 ~ /^auto/ {k = $1 " " $2 " " $3 " " $4 " " $5; if (!(k in seen)) {seen[k] = 1; order[n++] = k}
                   v[k] = v[k] " " $11 "=" $(NF)} END {for (i = 0; i < n; ++i) print order[i] v[order[i]]}' \
  "$out/attn_bench.log" 2>/dev/null | head -200
echo "== summary"
cat "$summary"
