# Session 21, call 2 (main's final code: variant 22 the wide serves' geometry again, its CTAs only
# waiting, not releasing their dependents): every GPU suite in the bundle (sharded) and served
# determinism; decode steps with 14 pinned against the default (22), Qwen3-32B-FP8 batch 16 two
# rounds, Qwen3-8B-FP8 batch 4/16/64 one round.
set -uo pipefail
GOLDEN_TIMEOUT=300 bash scripts/device-perf.sh --steps "golden determinism"
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/steps.txt; W=/tmp/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT); k14 = LATHE_ATTN_SPLITK_KERNEL=14, k22 = the default" >$S
step() {  # tag, variant (empty: default), model, batches
  local tag=$1 v=$2 model=$3 batches=$4
  env ${v:+LATHE_ATTN_SPLITK_KERNEL=$v} timeout 150 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 --out $W/s_$tag.json >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-16s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do step 32fp8_k14_r$r 14 Qwen3-32B-FP8 16; step 32fp8_k22_r$r "" Qwen3-32B-FP8 16; done
step 8fp8_k14 14 Qwen3-8B-FP8 4,16,64
step 8fp8_k22 "" Qwen3-8B-FP8 4,16,64
grep -h 'split-K attention kernel\|geometry' $W/s_8fp8_k22.log | head -3 >>$S
tar czf $OUT/steps.tgz -C $W .
cat $OUT/device-perf-summary.txt 2>/dev/null | tail -30
cat $S
