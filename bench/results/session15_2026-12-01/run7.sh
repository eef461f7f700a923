#!/usr/bin/env bash
# Session 15, call 7: tiers 1 and 4 refill after computing (tier 16 unchanged); auto:b3 without spills. A/B against the session
# start's binaries (old/), alternated, two rounds; ring depths by name.
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
timeout 100 $b/bin/gpu_cuda_gemv_test >$W/gemv_test.txt 2>&1
echo "gemv_test new default rc=$? $((SECONDS-t))s $(grep -E '^\[  (PASSED|FAILED)  \]' $W/gemv_test.txt | tr '\n' ' ')" >>$S
for v in auto:b3; do
  t=$SECONDS
  LATHE_GEMV_TEST_VARIANT_FP8=$v LATHE_GEMV_TEST_VARIANT_BF16=auto:b3 timeout 100 $b/bin/gpu_cuda_gemv_test >$W/gemv_test_$v.txt 2>&1
  echo "gemv_test new fp8=$v bf16=auto:b3 rc=$? $((SECONDS-t))s $(grep -E '^\[  (PASSED|FAILED)  \]' $W/gemv_test_$v.txt | tr '\n' ' ')" >>$S
done
for r in 1 2; do
  t=$SECONDS
  timeout 60 $b/old/lathe_bench_kernels --variants --shapes decode --variant-list auto --no-peers >$W/sweep_old_$r.txt 2>&1
  echo "sweep old r$r rc=$? $((SECONDS-t))s" >>$S
  t=$SECONDS
  timeout 90 $b/bin/lathe_bench_kernels --variants --shapes decode --variant-list auto,auto:b3,auto:s2 --no-peers >$W/sweep_new_$r.txt 2>&1
  echo "sweep new r$r rc=$? $((SECONDS-t))s" >>$S
done
for r in 1 2; do
  for who in old new; do
    bin=$b/bin; [[ $who == old ]] && bin=$b/old
    t=$SECONDS
    timeout 80 $bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
      --input-len 1024 --batch-sizes 1,4,16 --output-len 32 --out $W/lat8_${who}_$r.json >$W/lat8_${who}_$r.txt 2>&1
    echo "8B-FP8 $who r$r rc=$? $((SECONDS-t))s $(sed -n '/^ *batch/,/^decode_p50/p' $W/lat8_${who}_$r.txt | sed -n 2,4p | awk '{print "B"$1, $4, "x"$NF}' | tr '\n' ' ')" >>$S
  done
done
for who in old new; do
  bin=$b/bin; [[ $who == old ]] && bin=$b/old
  for cfg in Qwen3-8B Qwen3-32B-FP8; do
    t=$SECONDS
    timeout 100 $bin/lathe bench latency configs/$cfg --load-format dummy --device cuda \
      --input-len 1024 --batch-sizes 1,16 --output-len 32 --out $W/lat_${cfg}_${who}.json >$W/lat_${cfg}_${who}.txt 2>&1
    echo "$cfg $who rc=$? $((SECONDS-t))s $(sed -n '/^ *batch/,/^decode_p50/p' $W/lat_${cfg}_${who}.txt | sed -n 2,3p | awk '{print "B"$1, $4, "x"$NF}' | tr '\n' ' ')" >>$S
  done
done
grep -m1 'read ceiling' $W/sweep_new_1.txt >>$S
python3 - $W >>$S <<'PY'
import sys,collections
W=sys.argv[1]
best=collections.defaultdict(dict)
for who,vs in (('old',('auto',)),('new',('auto','auto:b3','auto:s2'))):
    for r in (1,2):
        for line in open(f'{W}/sweep_{who}_{r}.txt'):
            p=line.split()
            if len(p)>=10 and p[4] in('fp8','bf16') and p[6].startswith('v:') and 'not' not in p:
                k=(p[2]+'x'+p[3],p[4],p[5]); name=who+':'+p[6][2:]
                us=float(p[-3]); pct=p[-1]
                if name not in best[k] or us<best[k][name][0]: best[k][name]=(us,pct)
cols=['old:auto','new:auto','new:auto:b3','new:auto:s2']
print('best of 2 rounds, us (% of ceiling); shape dtype m | '+' | '.join(cols))
for k,v in best.items():
    print(' '.join(k),'|',' | '.join(f'{v[c][0]:.1f} ({v[c][1]})' if c in v else '-' for c in cols))
PY
tar czf $OUT/work.tgz -C $W .
cat $S
