#!/usr/bin/env bash
# Session 17, call 3: the register ring's batched split-K sum in its final form (4e5a156: tiers 4 and 16) against the code before it
# (bf0fbc7, perf-bundle/old): the GEMV tests, the decode GEMVs in context (after the norm) and
# the decode steps, old and new alternating.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz $b/old/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/* $b/old/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $S
echo "new $(cat $b/COMMIT), old bf0fbc7" >>$S
t=$SECONDS
timeout 240 $b/bin/gpu_cuda_gemv_test >$W/gemvtest.log 2>&1
echo "gpu_cuda_gemv_test rc=$? $(grep -E '^\[  (PASSED|FAILED)' $W/gemvtest.log | tr '\n' ' ') $((SECONDS-t))s" >>$S
kern() {  # tag, binary, dtype
  timeout 120 $2 --variants --variant-list auto --after-norm --no-peers --shapes decode --widths 1,4,16 --dtype $3 \
    --out $W/k_$1 >$W/k_$1.txt 2>&1
  echo "kernels $1 rc=$? $((SECONDS-t))s" >>$S
}
step() {  # tag, binary, model, batches
  timeout 150 $2 bench latency configs/$3 --load-format dummy --device cuda --batch-sizes $4 --input-len 1024 \
    --output-len 32 >$W/s_$1.txt 2>$W/s_$1.log
  printf '%-16s rc=%s %s\n' "$1" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$1.txt)" >>$S
}
for r in 1 2; do
  step 8b_old_r$r $b/old/lathe Qwen3-8B-FP8 1,4,16
  step 8b_new_r$r $b/bin/lathe Qwen3-8B-FP8 1,4,16
done
for r in 1 2; do
  step 32b_old_r$r $b/old/lathe Qwen3-32B-FP8 1,4,16
  step 32b_new_r$r $b/bin/lathe Qwen3-32B-FP8 1,4,16
done
step 8bbf16_old $b/old/lathe Qwen3-8B 1,4,16
step 8bbf16_new $b/bin/lathe Qwen3-8B 1,4,16
step 32bbf16_old $b/old/lathe Qwen3-32B 1,16
step 32bbf16_new $b/bin/lathe Qwen3-32B 1,16
kern fp8_old $b/old/lathe_bench_kernels fp8
kern fp8_new $b/bin/lathe_bench_kernels fp8
kern bf16_old $b/old/lathe_bench_kernels bf16
kern bf16_new $b/bin/lathe_bench_kernels bf16
tar czf $OUT/work.tgz -C $W .
cat $S
