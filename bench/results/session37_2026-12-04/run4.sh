#!/usr/bin/env bash
# Session 37, call 4 (perf-bundle at the commit of variant 26). The batch-1 kernels 21 / 23 / 26
# (two rounds), then decode steps with each geometry pinned (LATHE_ATTN_SPLITK_KERNEL), alternated:
# batch 1 under 21 / 23 / 26, batch 16 (and 64) under 22 / 25.
#   scripts/device-bundle.sh -j 2 --targets "lathe lathe_bench_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s37c4; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
for r in 1 2; do
  timeout 60 $b/bin/lathe_bench_attention --out $W --kernels 21,23,26 --policies auto+pack+slices --batches 1 \
    --dtypes bf16 >$W/b1_r$r.txt 2>&1
  echo "== batch 1 round $r rc=$? $((SECONDS - t0))s" >>$S
done
grep -hE '^[0-9]' $W/b1_r1.txt $W/b1_r2.txt | awk '{print $1,$2,$3,$4,"sl"$10,$13,$14,$18,$20,$23}' >>$S
step() {  # name variant model input batches
  LATHE_ATTN_SPLITK_KERNEL=$2 timeout 120 $b/bin/lathe bench latency configs/$3 --load-format dummy --device cuda \
    --input-len $4 --batch-sizes $5 --output-len 32 --out $W/$1.json >$W/$1.txt 2>$W/$1.log
  echo "$1 rc=$? $((SECONDS - t0))s: $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $W/$1.txt)" >>$S
}
for r in 1 2; do
  for v in 21 23 26; do
    step "8b_b1_in1024_k${v}_r$r" $v Qwen3-8B-FP8 1024 1
    step "8b_b1_in16384_k${v}_r$r" $v Qwen3-8B-FP8 16384 1
  done
  for v in 22 25; do
    step "8b_b16_in1024_k${v}_r$r" $v Qwen3-8B-FP8 1024 16,64
    step "8b_b16_in8192_k${v}_r$r" $v Qwen3-8B-FP8 8192 16
  done
done
for v in 21 23 26; do step "32b_b1_in16384_k$v" $v Qwen3-32B-FP8 16384 1; done
for v in 22 25; do step "32b_b16_in1024_k$v" $v Qwen3-32B-FP8 1024 16; done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
