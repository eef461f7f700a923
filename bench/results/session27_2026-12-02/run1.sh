# Session 27, call 1 (s27a-bundle: the split-K records merged in the split kernel's clusters):
# the merge's byte test (merged = split kernel + reduce), the co-batch determinism tests and the
# pipeline-depth byte tests under the default (auto) merge; then Qwen3-8B-FP8 / Qwen3-32B-FP8 decode
# steps with LATHE_ATTN_CLUSTER_MERGE=off (the reduce) against auto, and auto with
# LATHE_ATTN_MERGE_RELEASE=on, alternated, same binary.
#   scripts/device-bundle.sh --build build --bundle s27a-bundle --xz --targets "lathe gpu_attention"
set -uo pipefail
b=$PWD/s27a-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
filter='Shapes/DecodeArms.SplitKClusterMergeIsByteNeutral/*:Determinism/*:Shapes/DecodeArms.SplitKPipelineDepthIsByteNeutral/*'
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 200 $b/bin/gpu_attention \
    --gtest_filter="$filter" >$W/tests_shard$i.txt 2>&1 &
done
wait
for i in 0 1 2 3; do
  printf 'tests shard %s: %s | %s ok\n' $i "$(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' $W/tests_shard$i.txt | tr '\n' ' ')" \
    "$(grep -c '^\[       OK \]' $W/tests_shard$i.txt)" >>$S
done
grep -h '^\[  FAILED  \]' $W/tests_shard*.txt | sort -u | head -20 >>$S
grep -h -B2 -A6 'Failure' $W/tests_shard*.txt | head -40 >>$S
t0=$SECONDS
step() {  # tag, model, batches, env...
  local tag=$1 model=$2 batches=$3; shift 3
  env "$@" timeout 150 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-26s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  step 8B-FP8_off_r$r Qwen3-8B-FP8 1,4,16 LATHE_ATTN_CLUSTER_MERGE=off
  step 8B-FP8_auto_r$r Qwen3-8B-FP8 1,4,16
  step 8B-FP8_rel_r$r Qwen3-8B-FP8 1,4,16 LATHE_ATTN_MERGE_RELEASE=on
done
for r in 1 2; do
  step 8B-FP8-single_off_r$r Qwen3-8B-FP8 1 LATHE_ATTN_CLUSTER_MERGE=off
  step 8B-FP8-single_auto_r$r Qwen3-8B-FP8 1
  step 8B-FP8-single_rel_r$r Qwen3-8B-FP8 1 LATHE_ATTN_MERGE_RELEASE=on
done
step 32B-FP8_off Qwen3-32B-FP8 1,4 LATHE_ATTN_CLUSTER_MERGE=off
step 32B-FP8_auto Qwen3-32B-FP8 1,4
step 32B-FP8_rel Qwen3-32B-FP8 1,4 LATHE_ATTN_MERGE_RELEASE=on
grep -h "records merged\|merged in clusters" $W/s_8B-FP8_auto_r1.log $W/s_8B-FP8-single_auto_r1.log $W/s_32B-FP8_auto.log | head -8 >>$S
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
