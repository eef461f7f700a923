#!/usr/bin/env bash
# Session 15, call 1: in-loop L2 prefetch for the decode GEMV ring.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $S
cat $b/COMMIT >>$S
t=$SECONDS
timeout 150 $b/bin/gpu_cuda_gemv_test >$OUT/gemv_test_default.txt 2>&1
echo "gemv_test default rc=$? $((SECONDS-t))s $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/gemv_test_default.txt | tr '\n' ' ')" >>$S
t=$SECONDS
LATHE_GEMV_TEST_VARIANT_FP8=auto:p4 LATHE_GEMV_TEST_VARIANT_BF16=auto:p4 timeout 150 $b/bin/gpu_cuda_gemv_test >$OUT/gemv_test_p4.txt 2>&1
echo "gemv_test auto:p4 rc=$? $((SECONDS-t))s $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/gemv_test_p4.txt | tr '\n' ' ')" >>$S
t=$SECONDS
timeout 220 $b/bin/lathe_bench_kernels --variants --shapes decode --variant-list auto,auto:p2,auto:p4,auto:p8,auto >$OUT/sweep.txt 2>&1
echo "sweep rc=$? $((SECONDS-t))s" >>$S
for pf in off 4 off 4 8; do
  t=$SECONDS
  LATHE_GEMV_PREFETCH=$pf timeout 80 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
    --input-len 1024 --batch-sizes 1,16 --output-len 32 --out $OUT/lat_$pf.json >$OUT/lat_$pf.txt 2>$OUT/lat_$pf.log
  echo "latency pf=$pf rc=$? $((SECONDS-t))s $(sed -n '/^ *batch/,/^decode_p50/p' $OUT/lat_$pf.txt | head -5 | tr -s ' ' | tr '\n' '|')" >>$S
  cp $OUT/lat_$pf.txt $OUT/lat_${pf}_$t.txt
done
python3 - $OUT/sweep.txt >>$S <<'PY'
import sys,collections
rows=collections.defaultdict(dict)
for line in open(sys.argv[1]):
    p=line.split()
    if len(p)>=11 and p[4] in('fp8','bf16') and p[6].startswith(('v:','cublas')):
        key=(p[2]+'x'+p[3],p[4],p[5]); impl=p[6] if p[6].startswith('v:') else 'peer'
        pct=p[-1]
        rows[key].setdefault(impl,[]).append(pct)
impls=['v:auto','v:auto:p2','v:auto:p4','v:auto:p8','peer']
print('shape dtype m '+' '.join(impls))
for k,v in rows.items():
    print(' '.join(k),' '.join('/'.join(v.get(i,['-'])) for i in impls))
PY
cat $S
