#!/usr/bin/env bash
# Session 63, call 1 (bundle p63-bundle = main 5d68aea, whose cdbed4c had not run on a GPU: a
# persistent split-K launch whose units fit one wave runs per split).
# 1. the whole gpu_attention suite in 8 shards and gpu_golden_qwen3 on that code;
# 2. on an H200 (the issues' device): the issue-5 tables under the `h200` declaration with SDPA in
#    the same call, the fp8 GEMV table with cuBLASLt FP8 in the same process, the whole default
#    kernel table, then one round of 3;
# 3. elsewhere: session 62's run4.sh bench (the serve kernel beside 24 and 25, batch 2-16, two
#    processes) and run5.sh's lead (24 against 25 on 40/8/128 beside 32/8/128 and 64/8/128, two
#    processes, 1k / 4k / 64k).
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p63-bundle}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >>$S
(
  export LATHE_TEST_DEVICE=cuda
  echo "attention $(scripts/gtest-shards.sh $b/bin/gpu_attention 8 ${SHARD_LIMIT:-200} $W/attention.txt \
    --gtest_brief=1) $((SECONDS - t0))s" >>$S
)
grep -E '^\[  FAILED  \]|Failure' $W/attention.txt | head -10 >>$S
gpu_suite golden gpu_golden_qwen3
serve_rounds() {
  local r
  for r in $(seq 1 $1); do
    attn_bench "serve r$r" "$W/serve_r$r" 90 --kernels serve,24,25 --policies auto+pack --dtypes bf16 \
      --shapes 32/8/128,64/8/128 --batches 2,4,5,6,8,9,10,12,16 --contexts 1024,4096,16384,65536
  done
}
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  declared_issue5_tables
  fp8_table
  mkdir -p $OUT/full
  timeout 120 "$b/bin/lathe_bench_kernels" --out $OUT/full >$W/full_stdout.txt 2>&1
  echo "full table rc=$? $((SECONDS - t0))s" >>$S
  sed -n '/^summary/,$p' $W/full_stdout.txt >>$S
  serve_rounds 1
else
  serve_rounds 2
  for r in 1 2; do
    attn_bench "third shape r$r" "$W/third_r$r" 100 --kernels 24,25 --policies auto+pack --dtypes bf16 \
      --shapes 40/8/128,32/8/128,64/8/128 --batches 4,8,12,16,24,32,64 --contexts 1024,4096,65536
  done
  python3 bench/attention/kernel_columns.py $W/third_r1/attention_bench.csv $W/third_r2/attention_bench.csv \
    --base 25 >$W/third_columns.txt 2>&1
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
[[ -f $W/third_columns.txt ]] && tail -40 $W/third_columns.txt
