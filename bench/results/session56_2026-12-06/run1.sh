#!/usr/bin/env bash
# Session 56, call 1 (bundle p56-bundle = main 4b61f53: session 55's CTAs-per-SM cap, its one-wave
# spreading now the default, the same cap on the persistent grid 25/22, and variant 28 = 26 with 4
# stages for an FP8 cache). Built with
#   scripts/device-bundle.sh -j 2 --bundle p56-bundle --with-tokenizer --xz --targets \
#     "lathe lathe_bench_attention lathe_bench_kernels gpu_attention gpu_cuda_wave_fill_test gpu_golden_qwen3"
# Cheap measurements first (the device time left was short), then the tests, then what time allows:
# 1. the serve kernels at batch 4 / 8 / 16 under off / auto / 2, two rounds alternated (BF16 at
#    head dim 128 is the persistent grid, spread now under auto, sized by a pinned cap);
# 2. batch 1 with an FP8 cache: 26 against 28, whole splits and 2 / 3 slices, two rounds;
# 3. the issue-5 tables under the default, SDPA in the same call (the machine's declaration: h100
#    caps FP8 batch-1 slices at 2, h200 takes auto's);
# 4. tests: the padded request admits exactly the cap; the bytes under caps 1-3 / auto equal those
#    without (now also 22 and 25); 28 against 26 (FP8 pipeline-depth cases); the co-batch
#    determinism suite; the golden outputs;
# 5. while time lasts (LIMIT s from the start): decode steps (Qwen3-8B-FP8 dummy, 8k, batch 4 / 8)
#    off against auto, both KV dtypes; served determinism; on an H200 the fp8 GEMV table.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p56-bundle}"
export SUITE_TIMEOUT=${SUITE_TIMEOUT:-60}
for r in 1 2; do
  for cap in off auto 2; do
    LATHE_ATTN_CTAS_PER_SM=$cap attn_bench "cap $cap r$r" "$W/cap_${cap}_r$r" 60 --kernels serve \
      --policies auto+pack --batches 4,8,16 --contexts 1024,4096,16384,65536
  done
  attn_bench "k2628 r$r" "$W/k2628_r$r" 60 --kernels 26,28 --dtypes fp8 --batches 1 \
    --policies auto+pack,auto+pack+slices --slices 2,3 --contexts 4096,16384,32768,65536
done
h200=0
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && h200=1
if (( h200 )); then
  issue5_tables auto+pack+slices auto+pack+slices
else
  issue5_tables auto+pack auto+pack+slicesauto:2 --slices auto:2
fi
gpu_suite wavefill gpu_cuda_wave_fill_test
gpu_suite ctasbytes gpu_attention '--gtest_filter=*CtasPerSm*'
gpu_suite depthbytes gpu_attention '--gtest_filter=*PipelineDepthIsByteNeutral/fp8*'
gpu_suite cobatch gpu_attention '--gtest_filter=*CoBatch*:Determinism.*'
(( SECONDS - t0 < ${LIMIT:-250} - 60 )) && gpu_suite golden gpu_golden_qwen3
(( h200 && SECONDS - t0 < ${LIMIT:-250} - 60 )) && fp8_table
for kv in bf16 fp8; do
  for cap in off auto; do
    (( SECONDS - t0 < ${LIMIT:-250} - 40 )) || continue
    f=$W/step_Qwen3-8B-FP8_${kv}_${cap}.txt
    LATHE_ATTN_CTAS_PER_SM=$cap timeout 60 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy \
      --device cuda --kv-cache-dtype $kv --input-len 8192 --batch-sizes 4,8 --output-len 16 >$f 2>&1
    echo "step Qwen3-8B-FP8 $kv $cap rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' $f) $((SECONDS - t0))s" >>$S
  done
done
if (( SECONDS - t0 < ${LIMIT:-250} - 100 )); then
  "$b/bin/lathe" serve configs/Qwen3-8B-FP8 --load-format dummy --tokenizer "$b/tokenizer" --device cuda \
    --port 8011 --max-model-len 4096 --max-num-seqs 64 --served-model-name det >"$W/serve_det.log" 2>&1 &
  server=$!
  for _ in $(seq 1 90); do curl -sf http://127.0.0.1:8011/health >/dev/null 2>&1 && break; sleep 1; done
  grep -E "CTAs per SM|start-up took" "$W/serve_det.log" | head -3 >>"$S"
  timeout 90 python3 tools/serve_determinism_check.py --url http://127.0.0.1:8011 --model det --others 31 \
    --watched-len 150 >"$W/determinism.txt" 2>&1
  echo "determinism rc=$? $((SECONDS - t0))s" >>"$S"
  grep -E "IDENTICAL|DIFFERENT|determinism:" "$W/determinism.txt" >>"$S"
  kill -INT $server; wait $server 2>/dev/null
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
