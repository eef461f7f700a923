# Session 28, call 6 (s28g-bundle: lathe_probe_layer_chain with the engine GEMV modes): call 5's
# modes again, plus the engine's decode GEMV over the same 144 matrices (tier 1, one row, block-128
# scales, its default kernels, chained with early weights as the backend runs them) and, shape by shape,
# chained reads of a shape's 36 copies against the GEMV over them; two runs.
#   scripts/device-bundle.sh --build build --bundle s28g-bundle --xz --targets "lathe_probe_layer_chain"
set -uo pipefail
b=$PWD/s28g-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
for r in 1 2; do
  timeout 120 $b/bin/lathe_probe_layer_chain 36 >>$S 2>&1; echo "rc=$?" >>$S
done
cat $S
