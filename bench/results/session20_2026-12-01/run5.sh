# Session 20, call 5: variant 22 with its units described in a shared-memory table (fewer live
# registers in the tile loop; one query buffer). Its byte tests, the kernel A/B against 14 (one round),
# then Qwen3-8B-FP8 decode steps at batch 16 / 64 under 14 (the wide serves' default) and 22.
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
step() {  # tag, variant
  LATHE_ATTN_SPLITK_KERNEL=$2 timeout 150 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
    --batch-sizes 16,64 --input-len 1024 --output-len 32 --out $W/s_$1.json >$W/s_$1.txt 2>$W/s_$1.log
  printf '%-10s rc=%s %s\n' "$1" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$1.txt)" >>$S
}
step k14 14; step k22 22
cat $S; cat $W/ab.txt
for kv in 6Bf16Kv 5Fp8Kv; do
  for k in 23paged_decode_splitk_mma 30paged_decode_splitk_persistent; do
    name="_ZN5lathe4cuda4attn6splitk${k}INS1_${kv}ELi128ENS2_8SplitCfgILi4ELi2ELi16ELi3ELb1ELi1ELb0ELb1EEEEEvNS2_11SplitParamsE"
    cuobjdump -sass -fun "$name" $b/bin/lathe_bench_attention > $OUT/sass_${kv}_${k}.txt 2>&1
  done
done
