#!/usr/bin/env bash
# Session 46, for an H200 call (both issues' targets are stated for the H200; its last figures are
# session 42's): (1) the fp8 decode-width table with cuBLASLt FP8 in the same process (Qwen3-8B and
# 32B shapes, 1 / 4 / 16 rows), the first H200 table since sessions 44-45's x staging and K
# permutation; (2) the decode-attention serve kernels under `auto+pack` (+ slices at batch 1),
# SDPA in the same call and the issue-5 targets tables (no gpu_attention suite: session 42 ran it on
# the same attention kernels).
#   scripts/device-bundle.sh -j 2 --bundle p46-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels lathe_bench_attention" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p46-bundle}"
timeout 120 $b/bin/lathe_bench_kernels --only qwen3- --widths 1,4,16 --dtype fp8 >$W/table_fp8.txt 2>&1
echo "table fp8 rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $W/table_fp8.txt | head -1 | cut -c1-60)" >>$S
cp $W/table_fp8.txt $OUT/
mkdir -p $W/serve
timeout 240 $b/bin/lathe_bench_attention --out $W/serve --kernels serve --policies auto+pack,auto+pack+slices \
  >$W/serve/bench.txt 2>&1
echo "== bench rc=$? $((SECONDS - t0))s" >>$S
PYTHONUNBUFFERED=1 timeout 120 python3 tools/peers/sdpa_decode.py --out $W/sdpa.csv >$W/sdpa.log 2>&1
echo "== sdpa rc=$? $((SECONDS - t0))s" >>$S
for kv in bf16 fp8; do
  python3 bench/attention/targets.py $W/serve/attention_bench.csv $W/sdpa.csv --policy auto+pack \
    --b1-policy auto+pack+slices --kv $kv >$W/targets_${kv}.txt 2>&1
  echo "== targets $kv auto+pack (batch 1: auto+pack+slices)" >>$S
  tail -3 $W/targets_${kv}.txt >>$S
done
cp $W/serve/attention_bench.csv $W/sdpa.csv $OUT/ 2>/dev/null
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
