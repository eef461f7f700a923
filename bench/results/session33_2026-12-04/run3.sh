#!/usr/bin/env bash
# Session 33, call 3 (perf-bundle at this commit; main 4417c9c's lathe as lathe_main): (1) the GPU
# suites the bundle holds (scripts/device-perf.sh --steps golden, 4 shards: gpu_cuda_gemm_test; the
# device tool's 64 MiB carry takes two lathe-sized binaries beside the tree, so the other suites
# run in calls 4 and 5);
# (2) same-call A/B of the prefill and the decode step, main and new alternated: Qwen3-8B-FP8 and
# 8B BF16 at batch 1 and 16 (two rounds), Qwen3-32B-FP8 (one round); (3) the new LATHE_PROFILE
# prefill table of Qwen3-8B-FP8 at batch 16.
#   scripts/device-bundle.sh -j 2 --targets "lathe gpu_cuda_gemm_test" --bundle perf-bundle --xz \
#       --add lathe_main=<4417c9c's lathe>
set -uo pipefail
real_out=$OUT
export OUT=/tmp/s33c3; rm -rf $OUT; mkdir -p $OUT
b=$PWD/perf-bundle
scripts/device-perf.sh --steps golden
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/ab; mkdir -p $W
echo "commit $(git rev-parse --short HEAD 2>/dev/null); $(cat $b/ADDED)" >>$S
t0=$SECONDS
ab() {  # tag, binary, model, batches
  timeout 120 $b/bin/$2 bench latency configs/$3 --load-format dummy --device cuda --batch-sizes $4 \
    --input-len 1024 --output-len 32 >$W/$1.txt 2>$W/$1.log
  printf '%-26s rc=%s %4ss %s\n' $1 $? $((SECONDS - t0)) \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s prefill %s step %s  ", $1, $2, $4}' $W/$1.txt)" >>$S
}
for r in 1 2; do
  for bin in lathe_main lathe; do
    ab fp8_${bin}_r$r $bin Qwen3-8B-FP8 1,16
    ab bf16_${bin}_r$r $bin Qwen3-8B 1,16
  done
done
for bin in lathe_main lathe; do ab fp8-32b_${bin}_r1 $bin Qwen3-32B-FP8 1,16; done
LATHE_PROFILE=1 timeout 100 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
  --batch-sizes 16 --input-len 1024 --output-len 4 >$W/profile_fp8_b16.txt 2>&1
sed -n '/prefill steps/,/^$/p' $W/profile_fp8_b16.txt | head -20 >>$S
tar -C $OUT -cJf $real_out/all.tar.xz .
cp $S $real_out/summary.txt
cat $S
