# Session 29, call 3 (s29c-bundle: lathe of this build and main's at 43144f1 as lathe_main): decode
# steps of main's binary against this build's, alternated, same machine: Qwen3-8B-FP8 at batch
# 1/4/16 (three rounds), Qwen3-8B BF16 at batch 1/16 and Qwen3-32B-FP8 at batch 1/4 (two rounds);
# input 1024, output 32, dummy weights.
#   scripts/device-bundle.sh --build build --bundle s29c-bundle --xz --targets "lathe" \
#     --add lathe_main=/tmp/mainsrc/build/lathe
set -uo pipefail
b=$PWD/s29c-bundle
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
  step 8B-FP8_main_r$r lathe_main Qwen3-8B-FP8 1,4,16
  step 8B-FP8_new_r$r lathe Qwen3-8B-FP8 1,4,16
done
for r in 1 2; do
  step 8B-BF16_main_r$r lathe_main Qwen3-8B 1,16
  step 8B-BF16_new_r$r lathe Qwen3-8B 1,16
  step 32B-FP8_main_r$r lathe_main Qwen3-32B-FP8 1,4
  step 32B-FP8_new_r$r lathe Qwen3-32B-FP8 1,4
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
