# Session 25, call 7 (s25g-bundle): block sums from 2 rows only (one row sums its row in the
# consumer, as before the session): gpu_batch_invariance, then main f8185f4's `lathe` (lathe_base)
# against this `lathe`, alternated: Qwen3-8B-FP8 batch 1/2/4 three rounds, Qwen3-32B-FP8 batch
# 1/4 two rounds.
#   scripts/device-bundle.sh --build build --bundle s25g-bundle --xz \
#     --targets "lathe gpu_batch_invariance" --add lathe_base=/tmp/wt_base/build/lathe
set -uo pipefail
b=$PWD/s25g-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
timeout 100 $b/bin/gpu_batch_invariance >$OUT/gpu_batch_invariance.log 2>&1
echo "gpu_batch_invariance rc=$? $(grep -h '^\[  PASSED  \]\|^\[  FAILED  \]' $OUT/gpu_batch_invariance.log | head -3)" >>$S
t0=$SECONDS
step() {  # tag, binary, model, batches
  local tag=$1 bin=$2 model=$3 batches=$4
  timeout 150 $b/bin/$bin bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-24s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2 3; do
  step 8B-FP8_base_r$r lathe_base Qwen3-8B-FP8 1,2,4
  step 8B-FP8_final_r$r lathe Qwen3-8B-FP8 1,2,4
done
for r in 1 2; do
  step 32B-FP8_base_r$r lathe_base Qwen3-32B-FP8 1,4
  step 32B-FP8_final_r$r lathe Qwen3-32B-FP8 1,4
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
