#!/usr/bin/env bash
# Session 58, call 1 (bundle p58-bundle = main bdd90c4: opt-in split-K variant 28, 25's persistent
# grid with an FP8 cache, built last session and never run on a GPU). Built with
#   scripts/device-bundle.sh -j 2 --bundle p58-bundle --with-tokenizer --xz --targets "lathe \
#     lathe_bench_attention lathe_bench_kernels gpu_attention gpu_cuda_wave_fill_test gpu_golden_qwen3"
# 1. Variant 28's tests: its bytes against 24 (pipeline depth), under CTAs-per-SM caps, co-batched.
# 2. On an H200 only: the issue-5 tables (SDPA in the same call) and the fp8 GEMV table.
# 3. FP8 serve kernels 24 (the default) against 28, auto+pack, batch 4-64 at 1k/4k/16k, two rounds
#    in alternating order (one round on an H200).
# 4. Decode steps, Qwen3-32B-FP8 and Qwen3-8B-FP8 with an FP8 cache at 4k, batch 16 and 32, default
#    against LATHE_ATTN_SPLITK_KERNEL=28, while time lasts (LIMIT s, default 500).
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p58-bundle}"
LIMIT=${LIMIT:-500}
h200=0
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && h200=1
SUITE_TIMEOUT=150 gpu_suite v28 gpu_attention '--gtest_filter=*PipelineDepthIsByteNeutral*:*CtasPerSm*:*variant28*'
if (( h200 )); then
  issue5_tables auto+pack+slices auto+pack+slices
  fp8_table
fi
rounds="1 2"; (( h200 )) && rounds=1
for r in $rounds; do
  order="24,28"; (( r == 2 )) && order="28,24"
  attn_bench "fp8 r$r ($order)" "$W/fp8_r$r" 100 --kernels $order --policies auto+pack --dtypes fp8 \
    --batches 4,8,16,32,64 --contexts 1024,4096,16384
done
for r in 1 2; do
  for cell in Qwen3-32B-FP8:16,32:4096 Qwen3-8B-FP8:16,32:4096; do
    IFS=: read -r model batches len <<<"$cell"
    for k in default 28; do
      (( SECONDS - t0 < LIMIT - 40 )) || continue
      f=$W/step_${model}_fp8_L${len}_${k}_r$r.txt
      kv=(); [[ $k == 28 ]] && kv=(LATHE_ATTN_SPLITK_KERNEL=28)
      env "${kv[@]}" timeout 60 $b/bin/lathe bench latency configs/$model --load-format dummy \
        --device cuda --kv-cache-dtype fp8 --input-len $len --batch-sizes $batches --output-len 16 >$f 2>&1
      echo "step $model fp8 L$len $k r$r rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $f) $((SECONDS - t0))s" >>$S
    done
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
