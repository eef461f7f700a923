#!/usr/bin/env bash
# Session 16, call 4: the next chained grid released before the wait (LATHE_CHAINED_NEXT_FIRST):
# golden and batch-invariance suites with it on everywhere, then decode steps off / norms /
# attention / all, alternated, two rounds on 8B-FP8, one on 32B-FP8 and 8B BF16.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $S
echo "bundle $(cat $b/COMMIT)" >>$S
suite() {  # binary, shards, timeout
  local name=$1 shards=$2 limit=$3 t=$SECONDS pids=() rc=0
  for ((i = 0; i < shards; ++i)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout $limit $b/bin/$name >$W/$name.$i.log 2>&1 & pids+=($!)
  done
  for p in "${pids[@]}"; do wait $p || rc=$?; done
  echo "$name (LATHE_CHAINED_NEXT_FIRST=${LATHE_CHAINED_NEXT_FIRST:-unset}) rc=$rc $((SECONDS-t))s passed $(cat $W/$name.*.log | sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' | awk '{n+=$1} END {print n+0}') failed $(cat $W/$name.*.log | grep -c '^\[  FAILED  \] .*\.')" >>$S
  grep -h '^\[  FAILED  \] .*\.' $W/$name.*.log | head -5 >>$S
}
LATHE_CHAINED_NEXT_FIRST=all suite gpu_golden_qwen3 4 300
LATHE_CHAINED_NEXT_FIRST=all suite gpu_batch_invariance 1 300
run() {  # name, model, batches, env...
  local name=$1 model=$2 batches=$3; shift 3
  env "$@" timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda \
    --batch-sizes $batches --input-len ${INPUT_LEN:-1024} --output-len 32 >$W/$name.txt 2>$W/$name.log
  printf '%-26s rc=%s %s\n' "$name" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/$name.txt)" >>$S
}
for round in 1 2; do
  for mode in off norms attention all; do run 8b_fp8_${mode}_r$round Qwen3-8B-FP8 1,4,16,64 LATHE_CHAINED_NEXT_FIRST=$mode; done
done
for mode in off all; do
  run 32b_fp8_$mode Qwen3-32B-FP8 1,16 LATHE_CHAINED_NEXT_FIRST=$mode
  run 8b_bf16_$mode Qwen3-8B 1,16 LATHE_CHAINED_NEXT_FIRST=$mode
done
for mode in off all; do
  INPUT_LEN=16384 run 8b_fp8_16k_${mode} Qwen3-8B-FP8 1,16 LATHE_CHAINED_NEXT_FIRST=$mode
done
grep -h "next chained launch" $W/*.log | sed 's/^.*cuda backend/cuda backend/' | sort | uniq -c >>$S
tar czf $OUT/work.tgz -C $W .
cat $S
