# Session 19, call 8 (branch wip/gemv-deferred-sum + LATHE_GEMV_DEFER_ONLY): the deferred split-K
# sums for one consumer at a time (silu: gate|up only; norm: o and down only), against off and
# both, same binary, alternated.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/steps.txt; W=/tmp/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
step() {  # tag, model, batches, env...
  local tag=$1 model=$2 batches=$3; shift 3
  env "$@" timeout 100 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda --batch-sizes $batches \
    --input-len 1024 --output-len 32 --out $W/s_$tag.json >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-18s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  step 8fp8_off_r$r Qwen3-8B-FP8 1,4,16 LATHE_GEMV_DEFER_SUM=off
  step 8fp8_silu_r$r Qwen3-8B-FP8 1,4,16 LATHE_GEMV_DEFER_ONLY=silu
  step 8fp8_norm_r$r Qwen3-8B-FP8 1,4,16 LATHE_GEMV_DEFER_ONLY=norm
  step 8fp8_both_r$r Qwen3-8B-FP8 1,4,16
done
step 32fp8_off Qwen3-32B-FP8 1,16 LATHE_GEMV_DEFER_SUM=off
step 32fp8_silu Qwen3-32B-FP8 1,16 LATHE_GEMV_DEFER_ONLY=silu
step 32fp8_norm Qwen3-32B-FP8 1,16 LATHE_GEMV_DEFER_ONLY=norm
cat $S
