#!/usr/bin/env bash
# Session 37, call 6 (perf-bundle at 6a4f1e7: lathe with the tokenizer). Served determinism on both
# servers (the default server now on variant 25, the preempting one too), then decode steps with an
# FP8 KV cache, the new serve geometries (26 single, 25 wide) against the old ones pinned (21, 22).
#   scripts/device-bundle.sh -j 2 --targets lathe --bundle perf-bundle --xz --with-tokenizer
set -uo pipefail
b=$PWD/perf-bundle
S=$OUT/summary.txt; W=/tmp/s37c6; rm -rf $W; mkdir -p $W
OUT=$W/perf bash scripts/device-perf.sh --steps determinism >$W/perf.txt 2>&1
echo "commit $(cat $b/COMMIT)" >$S
cat $W/perf/summary.txt >>$S
grep -h 'split-K attention kernel variant' $W/perf/*.log 2>/dev/null | sort | uniq -c | head -4 >>$S
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
t0=$SECONDS
step() {  # name variant(or "default") model input batches extra...
  local name=$1 v=$2 model=$3 input=$4 batches=$5
  shift 5
  if [[ $v == default ]]; then
    timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda --input-len $input \
      --batch-sizes $batches --output-len 32 "$@" --out $W/$name.json >$W/$name.txt 2>$W/$name.log
  else
    LATHE_ATTN_SPLITK_KERNEL=$v timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda \
      --input-len $input --batch-sizes $batches --output-len 32 "$@" --out $W/$name.json >$W/$name.txt 2>$W/$name.log
  fi
  echo "$name rc=$? $((SECONDS - t0))s: $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $W/$name.txt) $(grep -o 'kernel variant [0-9]*' $W/$name.log | head -1)" >>$S
}
FP8KV="--kv-cache-dtype fp8 --calculate-kv-scales"
for r in 1 2; do
  step "8b_fp8kv_b1_in16384_k21_r$r" 21 Qwen3-8B-FP8 16384 1 $FP8KV
  step "8b_fp8kv_b1_in16384_new_r$r" default Qwen3-8B-FP8 16384 1 $FP8KV
  step "8b_fp8kv_b16_in1024_k22_r$r" 22 Qwen3-8B-FP8 1024 16,64 $FP8KV
  step "8b_fp8kv_b16_in1024_new_r$r" default Qwen3-8B-FP8 1024 16,64 $FP8KV
done
step "32b_fp8kv_b16_in4096_k22" 22 Qwen3-32B-FP8 4096 16 $FP8KV
step "32b_fp8kv_b16_in4096_new" default Qwen3-32B-FP8 4096 16 $FP8KV
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
