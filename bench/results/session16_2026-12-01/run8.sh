#!/usr/bin/env bash
# Session 16, call 8: the QK-norm/RoPE/KV write fused into the q|k|v decode GEMV (branch
# wip/qkv-rope). gpu_cuda_gemv_test (with the fused-vs-two-launches byte test) and
# gpu_golden_qwen3, then decode steps: main's binary (old, 9fa9b84: the 8B paths equal main's)
# vs the fused one (new), alternated.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz $b/old/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/* $b/old/*
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
  echo "$name rc=$rc $((SECONDS-t))s passed $(cat $W/$name.*.log | sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' | awk '{n+=$1} END {print n+0}') failed $(cat $W/$name.*.log | grep -c '^\[  FAILED  \] .*\.')" >>$S
  grep -h '^\[  FAILED  \] .*\.' $W/$name.*.log | head -5 >>$S
  grep -h -B3 'Failure' $W/$name.*.log | head -20 >>$S
}
suite gpu_cuda_gemv_test 4 200
suite gpu_golden_qwen3 4 300
grep -h "qkv projection" $W/gpu_golden_qwen3.*.log | sed 's/^.*qkv projection/qkv projection/' | sort | uniq -c >>$S
run() {  # name, binary, model, batches
  local name=$1 bin=$2 model=$3 batches=$4
  timeout 120 $bin bench latency configs/$model --load-format dummy --device cuda --batch-sizes $batches \
    --input-len ${INPUT_LEN:-1024} --output-len 32 >$W/$name.txt 2>$W/$name.log
  printf '%-22s rc=%s %s\n' "$name" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/$name.txt)" >>$S
}
for round in 1 2; do
  run 8b_fp8_old_r$round $b/old/lathe Qwen3-8B-FP8 1,4,16,64
  run 8b_fp8_new_r$round $b/bin/lathe Qwen3-8B-FP8 1,4,16,64
done
run 8b_bf16_old $b/old/lathe Qwen3-8B 1,16
run 8b_bf16_new $b/bin/lathe Qwen3-8B 1,16
INPUT_LEN=16384 run 8b_fp8_16k_old $b/old/lathe Qwen3-8B-FP8 1,16
INPUT_LEN=16384 run 8b_fp8_16k_new $b/bin/lathe Qwen3-8B-FP8 1,16
grep -h "qkv projection" $W/8b_fp8_new_r1.log | sed 's/^.*qkv projection/qkv projection/' | sort | uniq -c >>$S
tar czf $OUT/work.tgz -C $W .
cat $S
