# Sourced (not run) by a device run script at the repository root on the device machine:
#   source scripts/bundle-env.sh BUNDLE_DIR
# Unpacks the bundle (scripts/bundle-unpack.sh), points the loader at its libraries and the tests
# at the fixtures, and sets b (the bundle's absolute path), S ($OUT/summary.txt, begun with the
# bundle's commit and the GPU's name, driver and clock), W ($OUT/work, emptied) and t0 for the
# script, and defines gpu_suite (below).
b=$(cd "${1:?usage: source scripts/bundle-env.sh BUNDLE_DIR}" && pwd)
scripts/bundle-unpack.sh "$b" || echo "bundle-env: unpack of $b failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt
W=$OUT/work
rm -rf "$W"
mkdir -p "$W"
echo "commit $(cat "$b/COMMIT")" >"$S"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>"$S" 2>&1
t0=$SECONDS

# gpu_suite TAG BINARY [VAR=VALUE...]: runs the bundle's gtest BINARY on the GPU under those
# variables (240 s at most), its output in $W/TAG.txt; appends its verdict, counts and elapsed
# seconds to $S, and its first failures.
gpu_suite() {
  local tag=$1 bin=$2
  shift 2
  env LATHE_TEST_DEVICE=cuda "$@" timeout 240 "$b/bin/$bin" --gtest_brief=1 >"$W/$tag.txt" 2>&1
  echo "$tag rc=$? $(grep -E '^\[  (PASSED|FAILED) ' "$W/$tag.txt" | tr '\n' ' ') $((SECONDS - t0))s" >>"$S"
  grep -E '^\[  FAILED  \]|Failure' "$W/$tag.txt" | head -10 >>"$S"
}
