# Session 28, call 2 (s28b-bundle: lathe at 63b63cc, the scaled fp8 decode; main's lathe at 57e0ff4
# as lathe_main): decode steps, main's binary against this build's, alternated, three rounds:
# Qwen3-8B-FP8 batch 1/4/16 at 1k, Qwen3-32B-FP8 batch 1/16, Qwen3-8B BF16 batch 1 (its GEMVs keep
# the exact path: a control for machine drift).
#   scripts/device-bundle.sh --build build --bundle s28b-bundle --xz --targets "lathe" \
#     --add lathe_main=/tmp/mainbin/lathe
set -uo pipefail
b=$PWD/s28b-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
step() {  # tag, binary, model, batches
  local tag=$1 bin=$2 model=$3 batches=$4
  timeout 150 $b/bin/$bin bench latency configs/$model --load-format dummy --device cuda \
    --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-24s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2 3; do
  step 8B-FP8_main_r$r lathe_main Qwen3-8B-FP8 1,4,16
  step 8B-FP8_new_r$r lathe Qwen3-8B-FP8 1,4,16
done
for r in 1 2; do
  step 32B-FP8_main_r$r lathe_main Qwen3-32B-FP8 1,16
  step 32B-FP8_new_r$r lathe Qwen3-32B-FP8 1,16
done
step 8B-BF16_main lathe_main Qwen3-8B 1
step 8B-BF16_new lathe Qwen3-8B 1
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
