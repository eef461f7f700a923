#!/usr/bin/env bash
# Session 15, call 3: is the wide split-K grid's batch-16 shortfall wave quantization? And do split
# slices on a wide serve lift it?
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
W=/tmp/work; mkdir -p $W
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $S
cat $b/COMMIT >>$S
t=$SECONDS
timeout 150 $b/bin/lathe_bench_attention --kernels serve --policies auto+pack --shapes 64/8/128,32/8/128,24/4/256 \
  --batches 8,9,10,11,12,16,19,20 --contexts 16384 --dtypes bf16 --out $W/waves >$W/waves.txt 2>&1
echo "waves rc=$? $((SECONDS-t))s" >>$S
t=$SECONDS
timeout 240 $b/bin/lathe_bench_attention --kernels serve --policies auto+pack,auto+pack+slices --slices 2,3 \
  --batches 4,16,64 --contexts 4096,16384,65536 --dtypes bf16 --out $W/slices >$W/slices.txt 2>&1
echo "slices rc=$? $((SECONDS-t))s" >>$S
cp $W/waves/attention_bench.csv $OUT/waves.csv; cp $W/slices/attention_bench.csv $OUT/slices.csv
grep -m2 -i 'ceiling' $W/waves.txt >>$S
python3 - $OUT/waves.csv $OUT/slices.csv >>$S <<'PY'
import csv,sys
for f in sys.argv[1:]:
    rows=list(csv.DictReader(l for l in open(f) if not l.startswith('#')))
    print('==',f.split('/')[-1], 'columns:', ','.join(rows[0].keys()) if rows else '')
    for r in rows:
        print(' '.join(str(r.get(k,'')) for k in ('shape','kv','batch','context','policy','arm','splits','kernel','slices','us','pct_ceiling','pct_read')))
PY
tar czf $OUT/work.tgz -C $W .
cat $S
