#!/usr/bin/env bash
# Session 16, call 5: the marginal cost of each decode op inside the real (graph-replayed,
# chained) step. Diagnostic build (branch diag/skip-ops, LATHE_DIAG_SKIP=op,...): each op left
# out of every layer in turn; step time without it vs the full step. Outputs are garbage then,
# the bytes and kernels of the rest are the step's.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $S
echo "bundle $(cat $b/COMMIT) (diag/skip-ops)" >>$S
run() {  # name, model, batches, skip list
  local name=$1 model=$2 batches=$3 skip=$4
  LATHE_DIAG_SKIP=$skip timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda \
    --batch-sizes $batches --input-len 1024 --output-len 32 >$W/$name.txt 2>$W/$name.log
  printf '%-30s rc=%s %s\n' "$name" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/$name.txt)" >>$S
}
small=rope,attn,norm1,norm2,silu
gemvs=qkv,o,gateup,down
for round in 1 2; do
  for skip in none qkv o gateup down rope attn norm1 norm2 silu $small $gemvs; do
    run "8b_${skip//,/+}_r$round" Qwen3-8B-FP8 1,4,16 $skip
  done
done
for skip in none qkv o gateup down rope attn $small $gemvs; do
  run "32b_${skip//,/+}" Qwen3-32B-FP8 1,16 $skip
done
tar czf $OUT/work.tgz -C $W .
cat $S
