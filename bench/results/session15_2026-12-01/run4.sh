#!/usr/bin/env bash
# Session 15, call 4: unconditional ring loads in the GEMV register ring. A/B against the session
# start's binaries (old/), same process order alternated; SASS of the 8B gate|up m=1 kernel.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz $b/old/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/* $b/old/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
W=/tmp/work; mkdir -p $W
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $S
echo "new: $(cat $b/COMMIT)  old: 43ffa73 (session start code)" >>$S
t=$SECONDS
timeout 150 $b/bin/gpu_cuda_gemv_test >$W/gemv_test.txt 2>&1
echo "gemv_test new rc=$? $((SECONDS-t))s $(grep -E '^\[  (PASSED|FAILED)  \]' $W/gemv_test.txt | tr '\n' ' ')" >>$S
for r in 1 2; do
  for who in old new; do
    bin=$b/bin; [[ $who == old ]] && bin=$b/old
    t=$SECONDS
    timeout 120 $bin/lathe_bench_kernels --variants --shapes decode --variant-list auto --no-peers >$W/sweep_${who}_$r.txt 2>&1
    echo "sweep $who r$r rc=$? $((SECONDS-t))s" >>$S
  done
done
for r in 1 2; do
  for who in old new; do
    bin=$b/bin; [[ $who == old ]] && bin=$b/old
    t=$SECONDS
    timeout 80 $bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
      --input-len 1024 --batch-sizes 1,4,16 --output-len 32 --out $W/lat8_${who}_$r.json >$W/lat8_${who}_$r.txt 2>&1
    echo "8B-FP8 $who r$r rc=$? $((SECONDS-t))s $(sed -n '/^ *batch/,/^decode_p50/p' $W/lat8_${who}_$r.txt | sed -n 2,4p | awk '{print "B"$1, $4}' | tr '\n' ' ')" >>$S
  done
done
for who in old new; do
  bin=$b/bin; [[ $who == old ]] && bin=$b/old
  for cfg in Qwen3-8B Qwen3-32B-FP8; do
    t=$SECONDS
    timeout 100 $bin/lathe bench latency configs/$cfg --load-format dummy --device cuda \
      --input-len 1024 --batch-sizes 1,16 --output-len 32 --out $W/lat_${cfg}_${who}.json >$W/lat_${cfg}_${who}.txt 2>&1
    echo "$cfg $who rc=$? $((SECONDS-t))s $(sed -n '/^ *batch/,/^decode_p50/p' $W/lat_${cfg}_${who}.txt | sed -n 2,3p | awk '{print "B"$1, $4}' | tr '\n' ' ')" >>$S
  done
done
cuobjdump -sass $b/bin/lathe_bench_kernels 2>/dev/null | awk '/Function : .*gemv_kernel/{p=1} p' | gzip > $W/new_gemv_sass.txt.gz
cuobjdump -sass $b/old/lathe_bench_kernels 2>/dev/null | awk '/Function : .*gemv_kernel/{p=1} p' | gzip > $W/old_gemv_sass.txt.gz
python3 - $W >>$S <<'PY'
import sys,collections,math
W=sys.argv[1]
res=collections.defaultdict(list)
for who in ('old','new'):
    for r in (1,2):
        for line in open(f'{W}/sweep_{who}_{r}.txt'):
            p=line.split()
            if len(p)>=10 and p[4] in('fp8','bf16') and p[6]=='v:auto':
                res[(p[2]+'x'+p[3],p[4],p[5])].append((who,r,float(p[7])))
print('shape dtype m | old us r1 r2 | new us r1 r2 | old/new | new %ceil')
lg=collections.defaultdict(list)
for k,v in res.items():
    o=[t for w,r,t in v if w=='old']; n=[t for w,r,t in v if w=='new']
    sp=min(o)/min(n) if o and n else float('nan')
    lg[k[1]].append(math.log(sp))
    print(' '.join(k),'|',' '.join(f'{x:.1f}' for x in o),'|',' '.join(f'{x:.1f}' for x in n),'|',f'{sp:.3f}')
for d,l in lg.items(): print('geomean speed-up',d,f'{math.exp(sum(l)/len(l)):.3f}')
PY
for f in $W/sweep_new_1.txt; do grep -m1 'read ceiling' $f >>$S; done
tar czf $OUT/work.tgz -C $W .
cat $S
