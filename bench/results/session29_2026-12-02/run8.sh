# Session 29, call 8 (s29h-bundle: lathe at the final sources and main's at 43144f1 as lathe_main):
# the decode widths call 3 did not time, Qwen3-8B-FP8 at batch 2/3/8/32 (tier 4 at 2-3 rows, tier
# 16 at 8, two tier-16 halves at 32), and the Qwen3-8B BF16 batch-16 step again (call 3: +0.9%),
# main's binary against this build's, alternated, three rounds.
#   scripts/device-bundle.sh --build build --bundle s29h-bundle --xz --targets "lathe" \
#     --add lathe_main=/tmp/mainsrc/build/lathe
set -uo pipefail
b=$PWD/s29h-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
step() {  # tag, binary, model, batches
  local tag=$1 bin=$2 model=$3 batches=$4
  timeout 150 $b/bin/$bin bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-24s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2 3; do
  step 8B-FP8_main_r$r lathe_main Qwen3-8B-FP8 2,3,8,32
  step 8B-FP8_new_r$r lathe Qwen3-8B-FP8 2,3,8,32
  step 8B-BF16_main_r$r lathe_main Qwen3-8B 16
  step 8B-BF16_new_r$r lathe Qwen3-8B 16
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
