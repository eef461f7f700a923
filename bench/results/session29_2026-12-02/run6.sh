# Session 29, call 6 (s29f-bundle: lathe_probe_layer_chain of this build and main's at 43144f1 as
# lathe_probe_layer_chain_main): the engine's 1-row GEMV over a Qwen3-8B-FP8 step's matrices
# against a chained read of the same bytes, per shape, main against the split slots, alternated,
# two rounds.
#   scripts/device-bundle.sh --build build --bundle s29f-bundle --xz --targets "lathe_probe_layer_chain" \
#     --add lathe_probe_layer_chain_main=/tmp/mainsrc/build/bench/kernels/lathe_probe_layer_chain
set -uo pipefail
b=$PWD/s29f-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
for r in 1 2; do
  for v in main new; do
    bin=lathe_probe_layer_chain; [ $v = main ] && bin=lathe_probe_layer_chain_main
    echo "== probe $v r$r" >>$S
    timeout 120 $b/bin/$bin 36 >>$S 2>&1
    echo "rc=$?" >>$S
  done
done
cat $S
