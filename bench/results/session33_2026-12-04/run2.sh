#!/usr/bin/env bash
# Session 33, call 2 (perf-bundle at this commit): the prefill GEMM's pinned algorithm. The
# 1024-token prefill of Qwen3-8B-FP8, Qwen3-8B BF16 and Qwen3-32B-FP8 at batch 1 and 16 under
# LATHE_GEMM_PREFILL_PIN_M (256 = the pin before this session), the pinned tiles from the log; then
# LATHE_PROFILE=1 prefill tables of Qwen3-8B-FP8 / BF16 at batch 1 and 16 (warm-up now excluded).
#   scripts/device-bundle.sh -j 2 --targets "lathe" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s33w; rm -rf $W; mkdir -p $W
echo "commit $(git rev-parse --short HEAD 2>/dev/null)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
pin_run() {  # model, pin
  LATHE_GEMM_PREFILL_PIN_M=$2 timeout 100 $b/bin/lathe bench latency configs/$1 --load-format dummy \
    --device cuda --batch-sizes 1,16 --input-len 1024 --output-len 4 >$W/pin_$1_$2.txt 2>$W/pin_$1_$2.log
  printf '%-14s pin %5s rc=%s %4ss %s\n' $1 $2 $? $((SECONDS - t0)) \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $2}' $W/pin_$1_$2.txt)" >>$S
}
echo "prefill ms at batch 1 / 16 (1024 tokens a sequence) by LATHE_GEMM_PREFILL_PIN_M" >>$S
for m in Qwen3-8B-FP8 Qwen3-8B; do
  for pin in 256 1024 2048 4096 8192 256; do pin_run $m $pin; done
done
for pin in 256 2048 8192; do pin_run Qwen3-32B-FP8 $pin; done
for m in Qwen3-8B-FP8 Qwen3-8B; do
  for bs in 1 16; do
    LATHE_PROFILE=1 timeout 100 $b/bin/lathe bench latency configs/$m --load-format dummy --device cuda \
      --batch-sizes $bs --input-len 1024 --output-len 4 >$W/profile_${m}_b$bs.txt 2>&1
    echo "profile $m b$bs rc=$? $((SECONDS - t0))s" >>$S
  done
done
grep -h "gemm pin" $W/pin_*.log | sed 's/.*gemm pin/gemm pin/' | sort -u >>$S
for f in $W/profile_*.txt; do
  echo "== $(basename $f)" >>$S
  grep -E '^ *[0-9]+ ' $f | head -2 >>$S
  sed -n '/prefill steps/,/^$/p' $f | head -24 >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
