# Session 20, call 1: variant 22 (the wide geometry 14 on a persistent grid). Its byte tests
# (22 against 14, the co-batch test under 22, every serve-geometry test with 22 as the process's
# variant), then the kernel A/B: 14 and 22 alternated, two rounds, batches 4 / 16 / 64.
set -uo pipefail
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
echo "bundle $(cat $b/COMMIT)" >$S
filter='Shapes/DecodeArms.SplitKPipelineDepthIsByteNeutral/*:Shapes/DecodeArms.SlotsPastTheEndAreNeverSeen/*:Shapes/DecodeArms.EveryArmMatchesTheReference/*:Determinism/CoBatch.*/variant22*:Determinism/CoBatch.*/variant14*'
for i in 0 1 2 3; do
  LATHE_ATTN_SPLITK_KERNEL=22 GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 250 $b/bin/gpu_attention \
    --gtest_filter="$filter" >$W/tests_shard$i.txt 2>&1 &
done
wait
for i in 0 1 2 3; do
  printf 'tests shard %s: %s | %s\n' $i "$(grep -E '^\[  PASSED  \]|^\[  FAILED  \]' $W/tests_shard$i.txt | tr '\n' ' ')" \
    "$(grep -c '^\[       OK \]' $W/tests_shard$i.txt) ok" >>$S
done
grep -h '^\[  FAILED  \]' $W/tests_shard*.txt | sort -u | head -20 >>$S
bench() {  # tag, variant
  timeout 150 $b/bin/lathe_bench_attention --kernels $2 --policies auto+pack --batches 4,16,64 --out $W/$1 >$W/$1.log 2>&1
  echo "bench $1 rc=$? $(grep -m1 -i ceiling $W/$1.log)" >>$S
}
for r in 1 2; do bench k14_r$r 14; bench k22_r$r 22; done
for r in 1 2; do
  [[ -f $W/k22_r$r/attention_bench.csv && -f $W/k14_r$r/attention_bench.csv ]] &&
    python3 bench/attention/compare_runs.py $W/k22_r$r/attention_bench.csv $W/k14_r$r/attention_bench.csv --any-kernel >$W/ab_r$r.txt
done
cat $S
for r in 1 2; do echo "== round $r (speed-up = 14's time / 22's)"; cat $W/ab_r$r.txt 2>/dev/null; done
