#!/usr/bin/env bash
# Run THERE (device tool, carry ["device-bundle"], built by scripts/device-bundle.sh).
# Prints the GPU, runs every gpu test binary, the golden tests (LATHE_TEST_DEVICE=cuda for those
# that honour it) and the kernel benchmark; full logs go to $OUT (at most 8 files come back) and
# a short summary table is printed last.
#
# Usage: scripts/device-check.sh [--quick] [--no-bench] [--filter GTEST_FILTER] [--only REGEX]
#   --only runs only the test binaries whose names match REGEX (e.g. 'gpu_cuda' skips the
#   attention suite, which took 244 s on 2026-11-30).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$root/device-bundle
out=${OUT:-/tmp/lathe-device-out}
mkdir -p "$out"
quick=""
bench=1
filter="*"
only="."
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick="--quick" ;;
    --no-bench) bench=0 ;;
    --filter) filter=$2; shift ;;
    --only) only=$2; shift ;;
  esac
  shift
done
"$root/scripts/bundle-unpack.sh" "$bundle"  # a bundle packed with --gzip or --xz (no-op otherwise)
# cuBLAS/cuBLASLt come from the machine: the toolkit, or the pip wheels next to torch.
libdirs="/usr/local/cuda/lib64"
for d in $(python3 -c 'import nvidia.cublas as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null); do
  libdirs="$libdirs:$d"
done
export LD_LIBRARY_PATH="$bundle/lib:$libdirs:${LD_LIBRARY_PATH:-}"
summary="$out/summary.txt"
: >"$summary"
{
  echo "== device"
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
  echo "bundle commit: $(cat "$bundle/COMMIT" 2>/dev/null)"
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  for b in "$bundle"/bin/*; do ldd "$b" | grep "not found" | sed "s|^|$(basename "$b"): |"; done
} 2>&1 | tee "$out/device.txt"

run_group() {  # label, log file, binaries...
  local label=$1 log=$2
  shift 2
  for bin in "$@"; do
    [[ -x "$bin" ]] || continue
    local name
    name=$(basename "$bin")
    [[ "$name" =~ $only ]] || continue
    echo "===== $name" >>"$log"
    local start=$SECONDS
    LATHE_TEST_DEVICE=cuda timeout 300 "$bin" --gtest_filter="$filter" >>"$log" 2>&1
    local rc=$?
    local verdict=PASS
    case $rc in
      0) verdict=PASS ;;
      77) verdict=SKIP ;;
      124) verdict=TIMEOUT ;;
      *) verdict="FAIL(rc=$rc)" ;;
    esac
    local counts
    counts=$(grep -E '^\[  (PASSED|FAILED)  \]' "$log" | tail -2 | tr '\n' ' ')
    printf '%-8s %-40s %-10s %4ss %s\n' "$label" "$name" "$verdict" $((SECONDS - start)) "$counts" >>"$summary"
  done
}

run_group gpu "$out/gpu_tests.log" "$bundle"/bin/gpu_*
# What ctest registers twice: the invariance scenarios with the 32-row GEMV tier off, i.e. the
# seed's two 16-row launches (gpu_batch_invariance_halves, tests/gpu/golden/CMakeLists.txt).
LATHE_FFN_BATCH32=off run_group gpu-halves "$out/gpu_tests.log" "$bundle"/bin/gpu_batch_invariance
run_group golden "$out/golden_tests.log" "$bundle"/bin/golden_*
if [[ $bench == 1 && -x "$bundle/bin/lathe_bench_kernels" ]]; then
  start=$SECONDS
  timeout 420 "$bundle/bin/lathe_bench_kernels" --out "$out" $quick >"$out/bench.log" 2>&1
  printf '%-8s %-40s %-10s %4ss\n' bench lathe_bench_kernels "rc=$?" $((SECONDS - start)) >>"$summary"
  sed -n '/^summary/,$p' "$out/bench.log" >>"$summary"
fi
echo
grep -E '^\[  FAILED  \]|Failure|error' "$out/gpu_tests.log" 2>/dev/null | head -40
echo
echo "== summary"
cat "$summary"
