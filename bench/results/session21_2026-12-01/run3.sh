# Session 21, call 3: variant 22 releasing its dependents only from CTAs that run one unit (the
# rest only wait). 22's byte tests, then decode steps with 14 pinned against the default (22):
# Qwen3-8B-FP8 batch 4/16/64 two rounds (call 2 had batch 4 1.3% slower with no release at all),
# Qwen3-32B-FP8 batch 16 one round.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/steps.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT); k14 = LATHE_ATTN_SPLITK_KERNEL=14, k22 = the default" >$S
filter='Shapes/DecodeArms.SplitKPipelineDepthIsByteNeutral/*:Determinism/CoBatch.*/variant22*'
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 200 $b/bin/gpu_attention --gtest_filter="$filter" \
    >$W/tests_shard$i.txt 2>&1 &
done
wait
for i in 0 1 2 3; do
  printf 'tests shard %s: %s | %s ok\n' $i "$(grep -E '^\[  (PASSED|FAILED)  \]' $W/tests_shard$i.txt | tr '\n' ' ')" \
    "$(grep -c '^\[       OK \]' $W/tests_shard$i.txt)" >>$S
done
step() {  # tag, variant (empty: default), model, batches
  local tag=$1 v=$2 model=$3 batches=$4
  env ${v:+LATHE_ATTN_SPLITK_KERNEL=$v} timeout 150 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 --out $W/s_$tag.json >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-16s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do step 8fp8_k14_r$r 14 Qwen3-8B-FP8 4,16,64; step 8fp8_k22_r$r "" Qwen3-8B-FP8 4,16,64; done
step 32fp8_k14 14 Qwen3-32B-FP8 16; step 32fp8_k22 "" Qwen3-32B-FP8 16
rm -f $W/*.json
cat $S
