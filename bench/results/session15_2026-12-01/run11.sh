#!/usr/bin/env bash
# Session 15, call 11: the decode GEMV in context (--after-norm) against back to back; 8B gate|up on
# the two-CTA grid (ring:s4:k1:g16, the old choice) vs auto (three CTAs per SM, two K splits).
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $S
cat $b/COMMIT >>$S
for r in 1 2; do
  for mode in after back; do
    flag=""; [[ $mode == after ]] && flag=--after-norm
    timeout 60 $b/bin/lathe_bench_kernels --variants $flag --no-peers --only qwen3-8b/gate_up \
      --variant-list auto,ring:s4:k1:g16 >$OUT/gate_up_${mode}_$r.txt 2>&1
    echo "gate_up $mode r$r rc=$?" >>$S
  done
done
timeout 90 $b/bin/lathe_bench_kernels --variants --after-norm --no-peers --shapes decode --variant-list auto >$OUT/decode_after.txt 2>&1
echo "decode shapes after-norm rc=$?" >>$S
grep -m1 'read ceiling' $OUT/decode_after.txt >>$S
for f in $OUT/gate_up_*.txt $OUT/decode_after.txt; do
  echo "== $(basename $f)" >>$S
  grep -E '^qwen3' $f | grep -v 'read (same' | awk '{printf "%s %s %s m=%s %s %s us %s\n", $1, $2, $5, $6, $7, $(NF-2), $NF}' >>$S
done
cat $S
