# Session 20, call 6: variant 22 with the copy cursor and unit count in shared memory, Q fragments
# reloaded per chunk, one loop over tiles with unit ends as a branch. Its byte tests, the kernel
# A/B against 14 (one round), then Qwen3-8B-FP8 decode steps at batch 16 / 64 under 14 (the wide
# serves' default) and 22, with a BF16 and an FP8 KV cache.
set -uo pipefail
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
echo "bundle $(cat $b/COMMIT)" >$S
filter='Shapes/DecodeArms.SplitKPipelineDepthIsByteNeutral/*:Shapes/DecodeArms.SlotsPastTheEndAreNeverSeen/*:Determinism/CoBatch.*/variant22*'
for i in 0 1 2 3; do
  LATHE_ATTN_SPLITK_KERNEL=22 GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 200 $b/bin/gpu_attention \
    --gtest_filter="$filter" >$W/tests_shard$i.txt 2>&1 &
done
wait
for i in 0 1 2 3; do
  printf 'tests shard %s: %s | %s\n' $i "$(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' $W/tests_shard$i.txt | tr '\n' ' ')" \
    "$(grep -c '^\[       OK \]' $W/tests_shard$i.txt) ok" >>$S
done
grep -h '^\[  FAILED  \]' $W/tests_shard*.txt | sort -u | head -20 >>$S
for v in 14 22; do
  timeout 150 $b/bin/lathe_bench_attention --kernels $v --policies auto+pack --batches 4,16,64 >$W/k$v.log 2>&1
  echo "bench k$v rc=$? $(grep -m1 -i ceiling $W/k$v.log)" >>$S
done
python3 bench/attention/compare_runs.py $W/k22.log $W/k14.log --any-kernel >$W/ab.txt
step() {  # tag, variant, extra args
  LATHE_ATTN_SPLITK_KERNEL=$2 timeout 150 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
    --batch-sizes 16,64 --input-len 1024 --output-len 32 ${3:-} --out $W/s_$1.json >$W/s_$1.txt 2>$W/s_$1.log
  printf '%-10s rc=%s %s\n' "$1" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$1.txt)" >>$S
}
step k14 14; step k22 22
step k14_fp8kv 14 "--kv-cache-dtype fp8 --calculate-kv-scales"; step k22_fp8kv 22 "--kv-cache-dtype fp8 --calculate-kv-scales"
cat $S; cat $W/ab.txt
