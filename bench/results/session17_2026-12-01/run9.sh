#!/usr/bin/env bash
# Session 17, call 9: where Qwen3-32B BF16's batch-4 step goes (26.2 ms against 18.3 at batch 1 in
# calls 7-8, on this session's start and end alike): the per-phase profile (eager, an event per
# op) at batches 1 and 4, and the step without decode graphs.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
echo "main $(cat $b/COMMIT)" >$S
LATHE_PROFILE=1 timeout 120 $b/bin/lathe bench latency configs/Qwen3-32B --load-format dummy --device cuda \
  --batch-sizes 1,4 --input-len 1024 --output-len 16 >$W/profile.txt 2>$W/profile.log
echo "profile rc=$?" >>$S
timeout 100 $b/bin/lathe bench latency configs/Qwen3-32B --load-format dummy --device cuda --enforce-eager \
  --batch-sizes 1,2,4 --input-len 1024 --output-len 16 >$W/eager.txt 2>$W/eager.log
echo "eager rc=$?" >>$S
cat $W/profile.txt $W/eager.txt >>$S
tar czf $OUT/work.tgz -C $W .
cat $S
