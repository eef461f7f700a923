#!/usr/bin/env bash
# Session 57, call 2 (bundle p57b-bundle = main 6de76ab: BF16 split-K grids take any fuller count and
# the fewer CTAs per SM on a tie, the persistent grid judged by its rounds of units; the FP8 E4M3
# encoder on the float's bits). Built with
#   scripts/device-bundle.sh -j 2 --bundle p57b-bundle --with-tokenizer --xz --targets "lathe \
#     lathe_bench_attention lathe_bench_kernels gpu_attention gpu_cuda_wave_fill_test gpu_golden_qwen3"
# 1. Tests of the new rule: the cap's host test on the device, the bytes under caps (auto included)
#    equal those without, the co-batch determinism suite (its FP8 cases filled their caches through
#    the encoder: 41 s each in call 1).
# 2. On an H200 only: the issue-5 tables (SDPA in the same call) and the fp8 GEMV table.
# 3. The serve kernels with a BF16 cache at batch 12-64 under the new auto, pinned 3 and pinned 2
#    (one round): auto should read as 2 where the rule moves a grid, as 3 at 32/8/128 batch 16.
# 4. Decode steps, auto against pinned 3 (the FP8 rule's choice on these grids): Qwen3-32B-FP8 with
#    a BF16 cache at batch 16 and 1k (where a tie at 2 per SM measured slower by kernel), Qwen3-8B-FP8
#    with a BF16 cache at 4k, batch 16 (unmoved) and 32 (moved: 2304 units tie).
# 5. The golden outputs while time lasts (LIMIT s from the start, default 420).
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p57b-bundle}"
LIMIT=${LIMIT:-420}
h200=0
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && h200=1
gpu_suite wavefill gpu_cuda_wave_fill_test
gpu_suite ctasbytes gpu_attention '--gtest_filter=*CtasPerSm*'
SUITE_TIMEOUT=200 gpu_suite cobatch gpu_attention '--gtest_filter=*CoBatch*:Determinism.*'
if (( h200 )); then
  issue5_tables auto+pack+slices auto+pack+slices
  fp8_table
fi
for cap in auto 3 2; do
  LATHE_ATTN_CTAS_PER_SM=$cap attn_bench "cap $cap" "$W/cap_$cap" 60 --kernels serve \
    --policies auto+pack --dtypes bf16 --batches 12,16,24,32,64 --contexts 1024,4096,16384,65536
done
for r in 1 2; do
  for cell in Qwen3-32B-FP8:16:1024 Qwen3-8B-FP8:16,32:4096; do
    IFS=: read -r model batches len <<<"$cell"
    for cap in auto 3; do
      (( SECONDS - t0 < LIMIT - 60 )) || continue
      f=$W/step_${model}_bf16_L${len}_${cap}_r$r.txt
      LATHE_ATTN_CTAS_PER_SM=$cap timeout 60 $b/bin/lathe bench latency configs/$model --load-format dummy \
        --device cuda --kv-cache-dtype bf16 --input-len $len --batch-sizes $batches --output-len 16 >$f 2>&1
      echo "step $model bf16 L$len $cap r$r rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $f) $((SECONDS - t0))s" >>$S
    done
  done
done
left=$(( LIMIT - (SECONDS - t0) - 10 ))
(( left > 40 )) && SUITE_TIMEOUT=$left gpu_suite golden gpu_golden_qwen3
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
