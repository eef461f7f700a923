# Session 20, call 9: variant 22 taking its units from a launch counter (each CTA's first unit
# fixed, the rest taken in turn). Its byte tests, the kernel A/B against 14 (BF16 KV, where 22
# runs the persistent grid), then decode steps: Qwen3-8B-FP8 at batch 4 / 16 / 64 and Qwen3-32B-FP8
# at batch 4 / 16, 14 (pinned) and 22 (the default) alternated.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
filter='Shapes/DecodeArms.SplitKPipelineDepthIsByteNeutral/*:Shapes/DecodeArms.SlotsPastTheEndAreNeverSeen/*:Shapes/DecodeArms.EveryArmMatchesTheReference/*:Determinism/CoBatch.*/variant22*:Determinism.GraphReplayReadsDeviceLengths'
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 200 $b/bin/gpu_attention --gtest_filter="$filter" >$W/tests_shard$i.txt 2>&1 &
done
wait
for i in 0 1 2 3; do
  printf 'tests shard %s: %s | %s\n' $i "$(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' $W/tests_shard$i.txt | tr '\n' ' ')" \
    "$(grep -c '^\[       OK \]' $W/tests_shard$i.txt) ok" >>$S
done
grep -h '^\[  FAILED  \]' $W/tests_shard*.txt | sort -u | head -20 >>$S
for v in 14 22; do
  timeout 120 $b/bin/lathe_bench_attention --kernels $v --policies auto+pack --batches 4,16,64 --dtypes bf16 >$W/k$v.log 2>&1
  echo "bench k$v rc=$? $(grep -m1 -i ceiling $W/k$v.log)" >>$S
done
python3 bench/attention/compare_runs.py $W/k22.log $W/k14.log --any-kernel >$W/ab.txt
step() {  # tag, variant, model, batches
  LATHE_ATTN_SPLITK_KERNEL=$2 timeout 150 $b/bin/lathe bench latency configs/$3 --load-format dummy --device cuda \
    --batch-sizes $4 --input-len 1024 --output-len 32 --out $W/s_$1.json >$W/s_$1.txt 2>$W/s_$1.log
  printf '%-14s rc=%s %s\n' "$1" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$1.txt)" >>$S
}
step 8fp8_k14 14 Qwen3-8B-FP8 4,16,64; step 8fp8_k22 22 Qwen3-8B-FP8 4,16,64
step 32fp8_k14 14 Qwen3-32B-FP8 4,16; step 32fp8_k22 22 Qwen3-32B-FP8 4,16
step 32fp8_k14b 14 Qwen3-32B-FP8 16; step 32fp8_k22b 22 Qwen3-32B-FP8 16
cat $S; cat $W/ab.txt
