#!/usr/bin/env bash
# Session 17, call 5: (a) weights before the chained-launch wait in the 16-row tier too
# (run5_early16.diff on main, perf-bundle/var) against main (perf-bundle/bin),
# now that the tier's split-K tail is short; (b) main against bf0fbc7 (perf-bundle/old) on the
# Qwen3-8B BF16 step with main first, to see whether call 3's +1% at batch 1 follows the order
# (tier 1's PTX is the same in both).
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz $b/old/*.gz $b/var/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/* $b/old/* $b/var/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $S
echo "main $(cat $b/COMMIT), var = main + early reads in tier 16, old bf0fbc7" >>$S
step() {  # tag, binary, model, batches
  timeout 150 $2 bench latency configs/$3 --load-format dummy --device cuda --batch-sizes $4 --input-len 1024 \
    --output-len 32 >$W/s_$1.txt 2>$W/s_$1.log
  printf '%-18s rc=%s %s\n' "$1" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$1.txt)" >>$S
}
for r in 1 2; do
  step 8b_main_r$r $b/bin/lathe Qwen3-8B-FP8 1,16
  step 8b_early16_r$r $b/var/lathe Qwen3-8B-FP8 1,16
  step 32b_main_r$r $b/bin/lathe Qwen3-32B-FP8 1,16
  step 32b_early16_r$r $b/var/lathe Qwen3-32B-FP8 1,16
done
step 8bbf16_main $b/bin/lathe Qwen3-8B 16
step 8bbf16_early16 $b/var/lathe Qwen3-8B 16
for r in 1 2; do
  step 8bbf16_main_o$r $b/bin/lathe Qwen3-8B 1,4,16
  step 8bbf16_old_o$r $b/old/lathe Qwen3-8B 1,4,16
done
tar czf $OUT/work.tgz -C $W .
cat $S
