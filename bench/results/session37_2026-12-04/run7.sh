#!/usr/bin/env bash
# Session 37, call 7 (gold-bundle at 6a4f1e7): gpu_golden_qwen3 and gpu_batch_invariance on the new
# serve geometries (26 single, 25 wide), through device-perf.sh's golden step (4 shards each).
#   scripts/device-bundle.sh -j 2 --targets "gpu_golden_qwen3 gpu_batch_invariance" --bundle gold-bundle --xz
set -uo pipefail
rm -rf perf-bundle && mv gold-bundle perf-bundle
S=$OUT/summary.txt; W=/tmp/s37c7; rm -rf $W; mkdir -p $W
GOLDEN_TIMEOUT=300 OUT=$W/perf bash scripts/device-perf.sh --steps golden >$W/perf.txt 2>&1
echo "commit $(cat perf-bundle/COMMIT)" >$S
cat $W/perf.txt >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
