# Sourced (not run) by a device run script at the repository root on the device machine:
#   source scripts/bundle-env.sh BUNDLE_DIR
# Unpacks the bundle (scripts/bundle-unpack.sh), points the loader at its libraries and the tests
# at the fixtures, and sets b (the bundle's absolute path), S ($OUT/summary.txt, begun with the
# bundle's commit and the GPU's name, driver and clock) and W ($OUT/work, emptied) for the script.
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
