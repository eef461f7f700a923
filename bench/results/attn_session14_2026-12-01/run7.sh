#!/usr/bin/env bash
# Session 14 call 7: the reduce with one round trip after the wait, at 55-64 registers (call 6's
# form used 185 and lost a wave of reduce CTAs at batch 16): gpu_attention (4 shards), the
# attention bench main vs new (two rounds, serve geometries, batch 1 and 16), the Qwen3-8B-FP8
# decode step (1k, batch 1 and 16) main vs new, two rounds.
set -u
cd "$(dirname "$0")/.."
for f in ab-bundle/bin/*.gz ab-bundle/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
chmod +x ab-bundle/bin/*
export LD_LIBRARY_PATH="$PWD/ab-bundle/lib:/usr/local/cuda/lib64" LATHE_FIXTURES_DIR=$PWD/tests/fixtures
b=ab-bundle/bin
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader > $S
start=$SECONDS; pids=()
for i in 0 1 2 3; do GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 280 $b/gpu_attention > $OUT/t_$i.log 2>&1 & pids+=($!); done
for p in "${pids[@]}"; do wait $p; echo "gpu_attention shard rc=$?" >> $S; done
echo "gpu_attention $((SECONDS - start))s" >> $S
cat $OUT/t_*.log > $OUT/gpu_attention.log; rm -f $OUT/t_*.log
grep -E "^\[  (PASSED|FAILED)  \]" $OUT/gpu_attention.log >> $S
grep -B2 -A8 'Failure' $OUT/gpu_attention.log | head -40 >> $S
args="--kernels serve --policies auto+pack+slices --batches 1,16"
R=$OUT/runs
for r in 1 2; do
  for v in main reduce; do
    mkdir -p $R/$v$r
    timeout 100 $b/${v}_bench $args --out $R/$v$r > $R/$v$r/log.txt 2>&1
    echo "bench $v r$r rc=$?" >> $S
  done
  for v in main new; do
    start=$SECONDS
    timeout 120 $b/${v}_lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda --input-len 1024 \
      --batch-sizes 1,16 --output-len 32 --out $R/step_${v}_r$r.json > $R/step_${v}_r$r.txt 2>&1
    echo "step $v r$r rc=$? $((SECONDS - start))s" >> $S
  done
done
for r in 1 2; do
  python3 bench/attention/compare_runs.py $R/reduce$r/attention_bench.csv $R/main$r/attention_bench.csv > $OUT/ab_r$r.txt 2>&1
done
python3 - $R >> $S <<'PY'
import json, sys, glob, os
for path in sorted(glob.glob(sys.argv[1] + '/step_*.json')):
    d = json.load(open(path))
    print(os.path.basename(path), ' '.join('B%d %.3f ms' % (r['batch'], r['decode_median_ms']) for r in d['rows']))
PY
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
cat $S; cat $OUT/ab_r1.txt; cat $OUT/ab_r2.txt | awk '{print $1, $2, $3, $4, $9, $11}'
