#!/usr/bin/env bash
# Session 57, call 1 (bundle p57-bundle = main 7109ec2, the code of session 56's e799464). Built with
#   scripts/device-bundle.sh -j 2 --bundle p57-bundle --with-tokenizer --xz --targets "lathe \
#     lathe_bench_attention lathe_bench_kernels gpu_attention gpu_cuda_wave_fill_test gpu_golden_qwen3 gpu_cuda_gemv_test"
# 1. On an H200 only (none of sessions 51-56's GEMV or attention defaults ran on one): the fp8 GEMV
#    table (cuBLASLt FP8 in the same process) and the issue-5 tables under the h200 declaration
#    (SDPA in the same call).
# 2. Session 56's lead: BF16 grids whose waves fill the same at 2 and 3 CTAs per SM. The serve kernels
#    with a BF16 cache at batch 12-64 under LATHE_ATTN_CTAS_PER_SM=auto and =2, two rounds
#    alternated; then Qwen3-32B-FP8 decode steps with a BF16 cache at batch 16 (64/8/128: 640
#    persistent units, a tie) at 4k and 8k, auto against 2, two rounds alternated.
# 3. The co-batch determinism suite in what time is left (LIMIT s from the start, default 540).
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p57-bundle}"
LIMIT=${LIMIT:-540}
h200=0
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && h200=1
if (( h200 )); then
  fp8_table
  issue5_tables auto+pack+slices auto+pack+slices
fi
for r in 1 2; do
  for cap in auto 2; do
    LATHE_ATTN_CTAS_PER_SM=$cap attn_bench "cap $cap r$r" "$W/cap_${cap}_r$r" 60 --kernels serve \
      --policies auto+pack --dtypes bf16 --batches 12,16,24,32,64 --contexts 1024,4096,16384,65536
  done
done
for r in 1 2; do
  for len in 4096 8192; do
    for cap in auto 2; do
      (( SECONDS - t0 < LIMIT - 120 )) || continue
      f=$W/step_Qwen3-32B-FP8_bf16_L${len}_${cap}_r$r.txt
      LATHE_ATTN_CTAS_PER_SM=$cap timeout 90 $b/bin/lathe bench latency configs/Qwen3-32B-FP8 --load-format dummy \
        --device cuda --kv-cache-dtype bf16 --input-len $len --batch-sizes 16 --output-len 16 >$f 2>&1
      echo "step Qwen3-32B-FP8 bf16 L$len $cap r$r rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $f) $((SECONDS - t0))s" >>$S
    done
  done
done
left=$(( LIMIT - (SECONDS - t0) - 15 ))
(( left > 30 )) && SUITE_TIMEOUT=$left gpu_suite cobatch gpu_attention '--gtest_filter=*CoBatch*:Determinism.*'
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
