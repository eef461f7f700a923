#!/usr/bin/env bash
# Session 14 call 9: FP8 KV at batch 1, the single-sequence serve's default geometry (variant 21,
# slices by auto: 1 for Qwen3-8B's 72 KV-head x split pairs) against variant 16 with a slice cap
# of 3 (LATHE_ATTN_SPLITK_KERNEL=16 LATHE_ATTN_DECODE_SPLIT_SLICES=3): the Qwen3-8B-FP8 decode
# step at 1k, 8k, 16k and 32k, and the attention kernel sweep (final reduce).
set -u
cd "$(dirname "$0")/.."
B=perf-bundle
for f in $B/bin/*.gz $B/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
chmod +x $B/bin/*
export LD_LIBRARY_PATH="$PWD/$B/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader > $S
mkdir -p $OUT/geo
timeout 100 $B/bin/lathe_bench_attention --kernels 21,16 --policies auto+pack+slices --slices 1,2,3 --batches 1 \
  --dtypes fp8 --out $OUT/geo > $OUT/geo/log.txt 2>&1
echo "sweep rc=$?" >> $S
for len in 1024 8192 16384 32000; do
  for arm in default k16s3; do
    env=""; [[ $arm == k16s3 ]] && env="LATHE_ATTN_SPLITK_KERNEL=16 LATHE_ATTN_DECODE_SPLIT_SLICES=3"
    start=$SECONDS
    env $env timeout 150 $B/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
      --input-len $len --batch-sizes 1 --output-len 32 --kv-cache-dtype fp8 --calculate-kv-scales \
      --out $OUT/step_${arm}_$len.json > $OUT/step_${arm}_$len.txt 2>&1
    echo "step $arm $len rc=$? $((SECONDS - start))s" >> $S
  done
done
python3 - $OUT >> $S <<'PY'
import json, sys, glob, os, csv
out = sys.argv[1]
print('context  default(21, auto slices)  k16s3   ratio   (Qwen3-8B-FP8, FP8 KV, batch 1, decode step p50 ms)')
for n in (1024, 8192, 16384, 32000):
    try:
        a = json.load(open(f'{out}/step_default_{n}.json'))['rows'][0]['decode_median_ms']
        b = json.load(open(f'{out}/step_k16s3_{n}.json'))['rows'][0]['decode_median_ms']
        print(f'{n:7d}  {a:24.3f}  {b:6.3f}  {b / a:6.3f}')
    except Exception as e:
        print(n, 'missing', e)
rows = [r for r in csv.DictReader(l for l in open(f'{out}/geo/attention_bench.csv') if not l.startswith('#'))]
cells = {}
for r in rows:
    cells.setdefault((r['shape'], int(r['context'])), {})[(r['kernel'], r['policy'])] = float(r['us'])
cols = sorted({k for c in cells.values() for k in c})
print('attention, fp8 KV, batch 1, us: ' + ' '.join(f"{k[0]}/{k[1][-1]}" for k in cols))
for key in sorted(cells):
    print(f"{key[0]:10} {key[1]:6} " + ' '.join(f"{cells[key][k]:7.1f}" for k in cols))
PY
tar czf $OUT/raw.tgz -C $OUT geo $(cd $OUT && ls step_*) && rm -rf $OUT/geo $OUT/step_*
cat $S
