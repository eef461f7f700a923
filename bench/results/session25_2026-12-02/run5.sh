# Session 25, call 5 (s25e-bundle): the session's final code against the session's start, one
# machine: main f8185f4's `lathe` (added as lathe_base) and the final `lathe` (the sources of
# 2171cdf), alternated, three rounds: Qwen3-8B-FP8 batch 1/2/4/16/64, Qwen3-32B-FP8 batch 1/4/16,
# Qwen3-8B BF16 batch 1/4/16.
#   scripts/device-bundle.sh --build build --bundle s25e-bundle --xz --targets lathe \
#     --add lathe_base=/tmp/wt_base/build/lathe
set -uo pipefail
b=$PWD/s25e-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
t0=$SECONDS
step() {  # tag, binary, model, batches
  local tag=$1 bin=$2 model=$3 batches=$4
  timeout 150 $b/bin/$bin bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-24s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2 3; do
  step 8B-FP8_base_r$r lathe_base Qwen3-8B-FP8 1,2,4,16,64
  step 8B-FP8_final_r$r lathe Qwen3-8B-FP8 1,2,4,16,64
done
for r in 1 2; do
  step 32B-FP8_base_r$r lathe_base Qwen3-32B-FP8 1,4,16
  step 32B-FP8_final_r$r lathe Qwen3-32B-FP8 1,4,16
  step 8B_base_r$r lathe_base Qwen3-8B 1,4,16
  step 8B_final_r$r lathe Qwen3-8B 1,4,16
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
