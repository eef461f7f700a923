#!/usr/bin/env bash
# Session 15, call 9: gpu_golden_qwen3 on the new GEMV grid; per-phase profiles (LATHE_PROFILE=1,
# eager) of the 8B decode steps, old (session start) vs new, to see where the kernel gain goes.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz $b/old/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/* $b/old/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
W=/tmp/work; mkdir -p $W
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $S
echo "new: $(cat $b/COMMIT)  old: 43ffa73 (session start code)" >>$S
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
t=$SECONDS; pids=()
for i in 0 1 2 3; do GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 300 $b/bin/gpu_golden_qwen3 >$W/golden.$i.log 2>&1 & pids+=($!); done
rc=0; for p in "${pids[@]}"; do wait $p || rc=$?; done
echo "gpu_golden_qwen3 rc=$rc $((SECONDS-t))s passed $(cat $W/golden.*.log | sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' | awk '{n+=$1} END {print n+0}') failed $(cat $W/golden.*.log | grep -c '^\[  FAILED  \] .*\.' )" >>$S
for cfg in Qwen3-8B-FP8 Qwen3-8B; do
  for who in old new; do
    bin=$b/bin; [[ $who == old ]] && bin=$b/old
    LATHE_PROFILE=1 timeout 90 $bin/lathe bench latency configs/$cfg --load-format dummy --device cuda \
      --batch-sizes 1,16 --input-len 1024 --output-len 16 >$W/prof_${cfg}_$who.txt 2>$W/prof_${cfg}_$who.log
    echo "== $cfg $who rc=$?" >>$S
    grep -E 'decode steps of|gemv 24576x4096|gemv 4096x12288|gemv 6144x4096|gemv 4096x4096|between ops|  norm|attention  |silu' $W/prof_${cfg}_$who.txt | cut -c1-110 >>$S
  done
done
tar czf $OUT/work.tgz -C $W .
cat $S
