# Session 26, call 6 (s26e-bundle, the final code, with main 63b167f's `lathe` as lathe_base):
# the decode step across the widths the epilogue serves, base against this, alternated, two
# rounds: Qwen3-8B-FP8 batch 1/2/8/24/32 (24 and 32: the 16-row tier twice, on row halves),
# Qwen3-8B BF16 batch 4/32.
#   scripts/device-bundle.sh --build build --bundle s26e-bundle --xz \
#     --targets "lathe" --add lathe_base=/tmp/wt_base/build/lathe
set -uo pipefail
b=$PWD/s26e-bundle
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
for r in 1 2; do
  step 8B-FP8_base_r$r lathe_base Qwen3-8B-FP8 1,2,8,24,32
  step 8B-FP8_silu_r$r lathe Qwen3-8B-FP8 1,2,8,24,32
  step 8B-BF16_base_r$r lathe_base Qwen3-8B 4,32
  step 8B-BF16_silu_r$r lathe Qwen3-8B 4,32
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
