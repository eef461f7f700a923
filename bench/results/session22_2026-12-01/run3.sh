# Session 22, call 3: the split-K attention kernels (14, 21, the persistent 22, ...) wait without
# releasing the next chained grid. perf-bundle/bin/lathe = this tree, perf-bundle/bin/lathe_main =
# main before it (bee9a1b build = f9d11b3 code). gpu_golden_qwen3 of this tree (4 shards), then
# decode steps alternated main / new, two rounds, then Qwen3-32B BF16 batch 16 under 14 once.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/steps.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
t0=$SECONDS
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
pids=()
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 150 $b/bin/gpu_golden_qwen3 >$W/golden.$i.log 2>&1 &
  pids+=($!)
done
rc=0; for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
cat $W/golden.*.log > $OUT/gpu_golden_qwen3.log
echo "gpu_golden_qwen3 rc=$rc $((SECONDS - t0))s passed $(grep -h '^\[  PASSED  \]' $W/golden.*.log | awk '{n += $4} END {print n + 0}'), failed lines: $(grep -c '^\[  FAILED  \]' $OUT/gpu_golden_qwen3.log)" >>$S
step() {  # tag, binary, extra env (or -), model, batches
  local tag=$1 bin=$2 envs=$3 model=$4 batches=$5
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 100 $b/bin/$bin bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-30s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  for model in Qwen3-8B-FP8 Qwen3-32B-FP8; do
    (( SECONDS - t0 > 200 )) && break
    step ${model}_main_r$r lathe_main - $model 1,4,16
    step ${model}_new_r$r lathe - $model 1,4,16
  done
done
if (( SECONDS - t0 < 200 )); then
  step Qwen3-32B_k14_main lathe_main LATHE_ATTN_SPLITK_KERNEL=14 Qwen3-32B 16
  step Qwen3-32B_k14_new lathe LATHE_ATTN_SPLITK_KERNEL=14 Qwen3-32B 16
fi
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
