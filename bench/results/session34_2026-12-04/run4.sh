#!/usr/bin/env bash
# Session 34, call 4 (lathe-bundle at the commit it names; main 47c31a4's lathe as lathe_main):
# same-call A/B of the prefill, main and new alternated, two rounds: Qwen3-8B-FP8 and 8B BF16 at
# batch 1 and 16 with 1024-token prompts, Qwen3-8B-FP8 at batch 1 with an 8192-token prompt (where
# attention weighs more), Qwen3-32B-FP8 at batch 1 and 16 (one round); then the LATHE_PROFILE
# prefill table of Qwen3-8B-FP8 at batch 16 under the new build.
#   scripts/device-bundle.sh -j 2 --targets "lathe" --bundle lathe-bundle --xz --add lathe_main=<47c31a4's lathe>
set -uo pipefail
b=$PWD/lathe-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s34c4; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT); $(cat $b/ADDED)" >$S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>$S
t0=$SECONDS
ab() {  # tag, binary, model, batches, input length
  timeout 150 $b/bin/$2 bench latency configs/$3 --load-format dummy --device cuda --batch-sizes $4 \
    --input-len $5 --output-len 4 >$W/$1.txt 2>$W/$1.log
  printf '%-28s rc=%s %4ss %s\n' $1 $? $((SECONDS - t0)) \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s prefill_ms %s  ", $1, $2}' $W/$1.txt)" >>$S
  awk '$1 ~ /^[0-9]+$/ && NF == 4 {printf "    B%s prefill %s TFLOP/s (%s of the GEMM reference)\n", $1, $3, $4}' $W/$1.txt >>$S
}
for r in 1 2; do
  for bin in lathe_main lathe; do
    ab fp8_${bin}_r$r $bin Qwen3-8B-FP8 1,16 1024
    ab bf16_${bin}_r$r $bin Qwen3-8B 1,16 1024
    ab fp8_8k_${bin}_r$r $bin Qwen3-8B-FP8 1 8192
  done
done
for bin in lathe_main lathe; do ab fp8-32b_${bin}_r1 $bin Qwen3-32B-FP8 1,16 1024; done
LATHE_PROFILE=1 timeout 100 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
  --batch-sizes 16 --input-len 1024 --output-len 4 >$W/profile_fp8_b16.txt 2>&1
sed -n '/prefill steps/,/^$/p' $W/profile_fp8_b16.txt | head -24 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
