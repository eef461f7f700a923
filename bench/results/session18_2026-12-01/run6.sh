# Session 18, call 6 (main d02c5f1): second and third rounds of call 5's Qwen3-8B A/B (the new rule
# cost 0.2-1.4% there in single rounds), alternating new / old; and Qwen3-32B BF16 at batch 2 / 3 / 4.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e $f ]] && gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
echo "main $(cat $b/COMMIT)" >$S
step() {  # tag, model, batches, env...
  local tag=$1 model=$2 batches=$3; shift 3
  env "$@" timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda --batch-sizes $batches \
    --input-len 1024 --output-len 32 --out $W/s_$tag.json >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-18s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (avg %s)  ", $1, $4, $5}' $W/s_$tag.txt)" >>$S
}
for r in 2 3; do
  step 8fp8_new_r$r Qwen3-8B-FP8 1,4,16
  step 8fp8_old_r$r Qwen3-8B-FP8 1,4,16 LATHE_GEMV_SHAPE_VARIANTS=fp8/4096x4096=auto:e0
  step 8bf16_new_r$r Qwen3-8B 1,4,16
  step 8bf16_old_r$r Qwen3-8B 1,4,16 LATHE_GEMV_SHAPE_VARIANTS=bf16/4096x4096=auto:e0
done
step 32bf16_new Qwen3-32B 2,3,4
tar czf $OUT/work.tgz -C $W .
cat $S
