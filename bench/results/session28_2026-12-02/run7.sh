# Session 28, call 7 (s28h-bundle: lathe_probe_layer_chain built with the diagnostic patch
# call7/diag.patch on 3fbc34e, not committed: a device flag in the register-ring GEMV, 1 = the last
# CTA of a split block stores its own partial instead of summing the splits, 2 = no arrival either,
# 4 = x not staged; outputs wrong): where the GEMV's fixed ~3.8 us over a chained read of its bytes
# goes, shape by shape (Qwen3-8B-FP8, 36 copies each, tier 1, one row).
#   scripts/device-bundle.sh --build build --bundle s28h-bundle --xz --targets "lathe_probe_layer_chain"
set -uo pipefail
b=$PWD/s28h-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt
echo "bundle $(cat $b/COMMIT) + call7/diag.patch" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
for r in 1 2; do
  timeout 150 $b/bin/lathe_probe_layer_chain 36 >>$S 2>&1; echo "rc=$?" >>$S
done
cat $S
