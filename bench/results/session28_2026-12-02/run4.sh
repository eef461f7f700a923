# Session 28, call 4 (s28d-bundle: main's lathe at c62bbd2 = 57e0ff4's sources): the split-K
# attention's split-length floor (LATHE_ATTN_MIN_KV_PER_SPLIT, default 128) re-measured on today's
# geometries (a serve whose widest decode batch is above 2 runs variant 22) before making it a serve
# setting: Qwen3-8B-FP8 batch 1/4/16/32 at 1k and batch 1/16 at 4k, Qwen3-32B-FP8 batch 1/16 at
# 1k; floors 128 / 256 / 512 alternated in one binary.
#   scripts/device-bundle.sh --build build --bundle s28d-bundle --xz --targets "lathe"
set -uo pipefail
b=$PWD/s28d-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
step() {  # tag, model, batches, input len, env...
  local tag=$1 model=$2 batches=$3 len=$4; shift 4
  env "$@" timeout 150 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda \
    --batch-sizes $batches --input-len $len --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-26s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  for f in 128 256 512; do step 8B-FP8_min${f}_r$r Qwen3-8B-FP8 1,4,16,32 1024 LATHE_ATTN_MIN_KV_PER_SPLIT=$f; done
done
for f in 128 256 512; do step 8B-FP8-4k_min$f Qwen3-8B-FP8 1,16 4096 LATHE_ATTN_MIN_KV_PER_SPLIT=$f; done
for f in 128 256 512; do step 32B-FP8_min$f Qwen3-32B-FP8 1,16 1024 LATHE_ATTN_MIN_KV_PER_SPLIT=$f; done
grep -h "min_kv\|split" $W/s_8B-FP8_min256_r1.log | head -3 | cut -c1-300 >>$S
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
