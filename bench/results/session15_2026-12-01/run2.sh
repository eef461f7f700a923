#!/usr/bin/env bash
# Session 15, call 2: plain in-loop L2 prefetch for the GEMV ring; ncu of auto on 8B gate|up m=1.
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
LATHE_GEMV_TEST_VARIANT_FP8=auto:p2 LATHE_GEMV_TEST_VARIANT_BF16=auto:p2 timeout 150 $b/bin/gpu_cuda_gemv_test >$W/gemv_test_p2.txt 2>&1
echo "gemv_test auto:p2 rc=$? $((SECONDS-t))s $(grep -E '^\[  (PASSED|FAILED)  \]' $W/gemv_test_p2.txt | tr '\n' ' ')" >>$S
t=$SECONDS
timeout 200 $b/bin/lathe_bench_kernels --variants --shapes decode --variant-list auto,auto:p1,auto:p2,auto:p4,auto >$OUT/sweep.txt 2>&1
echo "sweep rc=$? $((SECONDS-t))s" >>$S
for pf in off 2 off 2; do
  t=$SECONDS
  LATHE_GEMV_PREFETCH=$pf timeout 80 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
    --input-len 1024 --batch-sizes 1,16 --output-len 32 --out $W/lat_$pf.json >$W/lat_$pf.txt 2>$W/lat_$pf.log
  echo "latency pf=$pf rc=$? $((SECONDS-t))s $(sed -n '/^ *batch/,/^decode_p50/p' $W/lat_$pf.txt | sed -n 2,3p | awk '{print $1, $4}' | tr '\n' ' ')" >>$S
done
ln -sfn perf-bundle gemv-bundle
t=$SECONDS
OUT=$W/ncu timeout 300 bash bench/kernels/device_run.sh --ncu qwen3-8b/gate_up:1:auto >$W/ncu_run.txt 2>&1
echo "ncu rc=$? $((SECONDS-t))s" >>$S
python3 - $OUT/sweep.txt >>$S <<'PY'
import sys,collections
rows=collections.defaultdict(dict)
for line in open(sys.argv[1]):
    p=line.split()
    if len(p)>=10 and p[4] in('fp8','bf16') and p[6].startswith(('v:','cublas')):
        key=(p[2]+'x'+p[3],p[4],p[5]); impl=p[6] if p[6].startswith('v:') else 'peer'
        rows[key].setdefault(impl,[]).append(p[9])
impls=['v:auto','v:auto:p1','v:auto:p2','v:auto:p4','peer']
print('shape dtype m '+' '.join(impls))
for k,v in rows.items():
    print(' '.join(k),' '.join('/'.join(v.get(i,['-'])) for i in impls))
PY
tail -40 $W/ncu_run.txt >>$S
tar czf $OUT/work.tgz -C $W .
cat $S
