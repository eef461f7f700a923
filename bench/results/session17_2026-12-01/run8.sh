#!/usr/bin/env bash
# Session 17, call 8: Qwen3-32B BF16 at batch 4 read 26.2 ms in call 7 (19.8 in the f78fc0c table):
# main (dda302d) against the session's start (bf0fbc7), alternating, with the GPU's clocks, power
# and throttle reasons sampled every 200 ms beside the runs.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz $b/old/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/* $b/old/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv,noheader | tee $S
echo "main $(cat $b/COMMIT), old bf0fbc7" >>$S
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader -lms 200 >$W/smi.csv 2>&1 &
smi=$!
step() {  # tag, binary, model, batches
  echo "$(date +%T.%N) start $1" >>$W/marks.txt
  timeout 150 $2 bench latency configs/$3 --load-format dummy --device cuda --batch-sizes $4 --input-len 1024 \
    --output-len 32 --out $W/s_$1.json >$W/s_$1.txt 2>$W/s_$1.log
  printf '%-18s rc=%s %s\n' "$1" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (avg %s)  ", $1, $4, $5}' $W/s_$1.txt)" >>$S
  echo "$(date +%T.%N) end $1" >>$W/marks.txt
}
for r in 1 2; do
  step 32bbf16_old_r$r $b/old/lathe Qwen3-32B 1,4,16
  step 32bbf16_main_r$r $b/bin/lathe Qwen3-32B 1,4,16
done
kill $smi
awk -F', ' '{print $6}' $W/smi.csv | sort | uniq -c | sort -rn | head -5 >>$S
awk -F', ' '{gsub(/ MHz/,"",$2); print $2}' $W/smi.csv | sort -n | uniq -c | sort -k2 -n | awk '{printf "%s MHz x%s; ", $2, $1} END {print ""}' >>$S
tar czf $OUT/work.tgz -C $W .
cat $S
