#!/usr/bin/env bash
# Session 45, call 5 (call 4 could not start; 5 minutes of device time left): the final sources'
# gemv suite (the rope epilogue fix) and one alternated round of the Qwen3-8B-FP8 decode step, new
# default against the previous choice.
#   scripts/device-bundle.sh -j 2 --bundle p45-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p45-bundle}"
gpu_suite gemv gpu_cuda_gemv_test LATHE_NONE=1
gpu_suite invariance gpu_batch_invariance LATHE_NONE=1
old8="fp8/6144x4096=ring:k5:g16,fp8/4096x4096=ring:k5:g16,fp8/4096x12288=ring:k8:g16"
for tag in new old new old; do
  f=$W/latency_8b_$tag.txt
  env LATHE_GEMV_SHAPE_VARIANTS="$([[ $tag == old ]] && echo "$old8")" timeout 60 $b/bin/lathe bench latency \
    configs/Qwen3-8B-FP8 --load-format dummy --device cuda --input-len 1024 --batch-sizes 1,4,16,32 --output-len 32 >>$f 2>&1
  echo "latency 8b $tag rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $f | tail -c 200) $((SECONDS - t0))s" >>$S
done
grep -hE "QK-norm, RoPE" $W/latency_8b_new.txt | head -1 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
