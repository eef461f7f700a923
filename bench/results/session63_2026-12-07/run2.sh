#!/usr/bin/env bash
# Session 63, call 2 (bundle p63-bundle = main 5d68aea, whose attention and GEMV code call 1's
# gpu_attention and gpu_golden_qwen3 passed): main's figures for the status rows, on whichever card
# comes (asked for an H200, the issues' device, unmeasured since sessions 48 and 50):
# 1. the issue-5 tables under the card's declaration, PyTorch SDPA on contiguous KV in the same call;
# 2. the fp8 GEMV table with cuBLASLt FP8 in the same process, then the whole default kernel table
#    (every shape, fp8 and bf16, m = 1..32, cuBLASLt FP8 and cuBLAS BF16 in the same process);
# 3. decode steps at 1k context, batch 1 / 4 / 16 / 32: Qwen3-8B-FP8, Qwen3-8B, Qwen3-32B-FP8, two
#    rounds of the first two;
# 4. on an H200 only: the serve kernel beside 24 and 25 on 40/8/128, 32/8/128 and 64/8/128 (call 1's
#    H100 comparison), two processes.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p63-bundle}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >>$S
declared_issue5_tables
fp8_table
mkdir -p $OUT/full
timeout 150 "$b/bin/lathe_bench_kernels" --out $OUT/full >$W/full_stdout.txt 2>&1
echo "full table rc=$? $((SECONDS - t0))s" >>$S
sed -n '/^summary/,$p' $W/full_stdout.txt >>$S
export BATCHES=1,4,16,32
for r in 1 2; do
  step_arm 8b_fp8_r$r Qwen3-8B-FP8 ""
  step_arm 8b_bf16_r$r Qwen3-8B ""
done
LIMIT=460 step_arm 32b_fp8 Qwen3-32B-FP8 ""
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  for r in 1 2; do
    attn_bench "serve and third shape r$r" "$W/third_r$r" 60 --kernels serve,24,25 --policies auto+pack \
      --dtypes bf16 --shapes 40/8/128,32/8/128,64/8/128 --batches 2,4,8,12,16,32,64 --contexts 1024,4096,65536
  done
  python3 bench/attention/kernel_columns.py $W/third_r1/attention_bench.csv $W/third_r2/attention_bench.csv \
    --base 25 >$W/third_columns.txt 2>&1
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
