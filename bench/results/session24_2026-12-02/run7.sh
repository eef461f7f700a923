# Session 24, call 7 (s24f-bundle, lathe at the final code): which two-CTA shape made the decode
# step slower when `auto` took ":wg" there (call 2: Qwen3-8B-FP8 batch 16 +1.0%)? The default
# against ":wg" pinned on all three two-CTA fp8 shapes of Qwen3-8B and on each alone
# (LATHE_GEMV_SHAPE_VARIANTS), batch 8 and 16, alternated, two rounds.
#   scripts/device-bundle.sh --build build --bundle s24f-bundle --xz --targets "lathe"
set -uo pipefail
b=$PWD/s24f-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
t0=$SECONDS
step() {  # tag, env (or -), model, batches
  local tag=$1 envs=$2 model=$3 batches=$4
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 100 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-16s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
V=LATHE_GEMV_SHAPE_VARIANTS
qkv=fp8/6144x4096=ring:k5:g16:wg; o=fp8/4096x4096=ring:k5:g16:wg; down=fp8/4096x12288=ring:k8:g16:wg
for r in 1 2; do
  step default_r$r - Qwen3-8B-FP8 8,16
  step all_r$r $V=$qkv,$o,$down Qwen3-8B-FP8 8,16
  step qkv_r$r $V=$qkv Qwen3-8B-FP8 8,16
  step o_r$r $V=$o Qwen3-8B-FP8 8,16
  step down_r$r $V=$down Qwen3-8B-FP8 8,16
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
