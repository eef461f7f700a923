# Session 23, call 1 (late-bundle: main 568e4b4's lathe, gpu_attention, gpu_golden_qwen3,
# gpu_batch_invariance; branch wip/split-late-release 9a6721d's lathe as lathe_late).
# 1. main's GPU suites on the split-K kernels without early release (325a57d; gpu_attention was not
#    run on that code in session 22). 2. The late-release A/B prepared in session 22.
set -uo pipefail
b=$PWD/late-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" >$S
t0=$SECONDS
suite() {  # name, shards, timeout
  local name=$1 shards=$2 limit=$3 pids=() rc=0 t=$SECONDS
  for ((i = 0; i < shards; i++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout $limit $b/bin/$name >$W/$name.$i.log 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
  cat $W/$name.*.log >$OUT/$name.log
  printf '%-22s rc=%s %4ss passed %s, failed lines %s\n' "$name" "$rc" "$((SECONDS - t))" \
    "$(grep -h '^\[  PASSED  \]' $W/$name.*.log | awk '{n += $4} END {print n + 0}')" \
    "$(grep -c '^\[  FAILED  \]' $OUT/$name.log)" >>$S
}
suite gpu_attention 4 240
suite gpu_golden_qwen3 2 200
suite gpu_batch_invariance 1 100
step() {  # tag, binary, env (or -), model, batches
  local tag=$1 bin=$2 envs=$3 model=$4 batches=$5
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 100 $b/bin/$bin bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-30s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  for model in Qwen3-8B-FP8 Qwen3-32B-FP8; do
    (( SECONDS - t0 > 500 )) && break
    step ${model}_main_r$r lathe - $model 1,4,16
    step ${model}_late0_r$r lathe_late LATHE_DIAG_SPLIT_LATE_RELEASE=0 $model 1,4,16
    step ${model}_late1_r$r lathe_late LATHE_DIAG_SPLIT_LATE_RELEASE=1 $model 1,4,16
  done
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
