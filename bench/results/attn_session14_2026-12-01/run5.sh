#!/usr/bin/env bash
# Session 14 call 5: validation of the per-head-dim box width and the new FP8-KV golden tests
# (gpu_attention and gpu_golden_qwen3, 4 shards each), the A/B against main (two rounds), and an
# FP8-KV batch-1 geometry sweep (kernels 21/20/16 x slice caps 1-4).
set -u
cd "$(dirname "$0")/.."
for f in ab-bundle/bin/*.gz ab-bundle/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
chmod +x ab-bundle/bin/*
export LD_LIBRARY_PATH="$PWD/ab-bundle/lib:/usr/local/cuda/lib64" LATHE_FIXTURES_DIR=$PWD/tests/fixtures
b=ab-bundle/bin
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader > $S
for t in gpu_golden_qwen3 gpu_attention; do
  start=$SECONDS; pids=()
  for i in 0 1 2 3; do GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 280 $b/$t > $OUT/t_$i.log 2>&1 & pids+=($!); done
  for p in "${pids[@]}"; do wait $p; echo "$t shard rc=$?" >> $S; done
  echo "$t $((SECONDS - start))s" >> $S
  cat $OUT/t_*.log > $OUT/$t.log; rm -f $OUT/t_*.log
  grep -E "^\[  (PASSED|FAILED)  \]" $OUT/$t.log >> $S
  grep -B2 -A8 'Failure' $OUT/$t.log | head -40 >> $S
done
grep -E "fp8 KV|bf16 KV" $OUT/gpu_golden_qwen3.log > $OUT/golden_kv_lines.txt
args="--kernels serve --policies auto+pack+slices --batches 1,16"
for r in 1 2; do
  for v in main new; do
    mkdir -p $OUT/runs/$v$r
    timeout 100 $b/${v}_bench $args --out $OUT/runs/$v$r > $OUT/runs/$v$r/log.txt 2>&1
    echo "bench $v r$r rc=$?" >> $S
  done
done
R=$OUT/runs
for r in 1 2; do
  python3 bench/attention/compare_runs.py $R/new$r/attention_bench.csv $R/main$r/attention_bench.csv > $OUT/ab_r$r.txt 2>&1
done
mkdir -p $R/fp8geo
timeout 200 $b/new_bench --kernels 21,20,16 --policies auto+pack+slices --slices 1,2,3,4 --batches 1 --dtypes fp8 \
  --out $R/fp8geo > $R/fp8geo/log.txt 2>&1
echo "fp8 geometry sweep rc=$?" >> $S
python3 - $R/fp8geo/attention_bench.csv > $OUT/fp8_geometry.txt <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
cells = {}
for r in rows:
    cells.setdefault((r['shape'], int(r['context'])), {})[(r['kernel'], r['policy'])] = (float(r['us']), float(r['pct_ceiling']), r['slices'])
cols = sorted({k for c in cells.values() for k in c})
print('shape      L      ' + ' '.join(f"{k[0]}/{k[1][-1]:>1}" .rjust(9) for k in cols) + '   (us; kernel/slice cap)')
for key in sorted(cells):
    print(f"{key[0]:10} {key[1]:6} " + ' '.join(f"{cells[key][k][0]:9.1f}" if k in cells[key] else '        -' for k in cols))
PY
tar czf $OUT/runs.tgz -C $OUT runs && rm -rf $OUT/runs
cat $S; cat $OUT/golden_kv_lines.txt | head -40; cat $OUT/fp8_geometry.txt; cat $OUT/ab_r1.txt
