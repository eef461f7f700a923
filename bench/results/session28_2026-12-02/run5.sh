# Session 28, call 5 (s28f-bundle: lathe_probe_layer_chain, new in this session): what the kernel
# boundaries cost a decode step that only streams its weights: Qwen3-8B-FP8's 36 layers x 4 GEMV
# matrices read as 144 launches (plain, chained, chained with the first loads before the wait)
# against one persistent launch with a grid barrier between matrices (next loads before / after the
# barrier) and without barriers; two runs, then 8 layers (a step that fits fewer bytes).
#   scripts/device-bundle.sh --build build --bundle s28f-bundle --xz --targets "lathe_probe_layer_chain"
set -uo pipefail
b=$PWD/s28f-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
for r in 1 2; do
  timeout 120 $b/bin/lathe_probe_layer_chain 36 >>$S 2>&1; echo "rc=$?" >>$S
done
timeout 120 $b/bin/lathe_probe_layer_chain 8 >>$S 2>&1; echo "rc=$?" >>$S
cat $S
