#!/usr/bin/env bash
# Session 64, for the next session's first call (not run in session 64: its device time was
# spent). Bundle: `scripts/device-bundle.sh -j 2 --bundle p64b-bundle --xz --targets "lathe
# lathe_bench_attention lathe_bench_kernels gpu_attention gpu_golden_qwen3 gpu_batch_invariance"`
# (~23 MiB beside the ~31 MiB tree: check the script's carry line) of main after 15f57f0 (a4a3bf9: more than 8 splits a sequence launches per split; 15f57f0: the
# persistent grid back under gpu_attention's byte tests, pinned 4 with whole splits).
# 1. the whole gpu_attention suite in 8 shards (15f57f0's tests, first run), gpu_golden_qwen3,
#    gpu_batch_invariance;
# 2. the issue-5 tables under the card's declaration with SDPA in the same call (the status rows;
#    a4a3bf9 moves the 32/8/128 cells at batch 16 and 64);
# 3. on an H200 (the issues' device): session 63's run2.sh into $OUT/h200 (the GEMV tables with
#    cuBLASLt FP8, the decode steps), and 24 against 25 at batch 16-64 (a4a3bf9's rule measured
#    there: session 64's call 2 on an H100).
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p64b-bundle}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >>$S
(
  export LATHE_TEST_DEVICE=cuda
  echo "attention $(scripts/gtest-shards.sh $b/bin/gpu_attention 8 ${SHARD_LIMIT:-240} $W/attention.txt \
    --gtest_brief=1) $((SECONDS - t0))s" >>$S
)
grep -E '^\[  FAILED  \]|Failure' $W/attention.txt | head -10 >>$S
SUITE_TIMEOUT=150 gpu_suite golden gpu_golden_qwen3
SUITE_TIMEOUT=150 gpu_suite invariance gpu_batch_invariance
declared_issue5_tables
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  for r in 1 2; do
    attn_bench "wide r$r" "$W/wide_r$r" 60 --kernels 24,25 --policies auto+pack --dtypes bf16 \
      --batches 16,32,48,64 --contexts 1024,2048,4096,16384,65536
  done
  python3 bench/attention/kernel_columns.py $W/wide_r1/attention_bench.csv $W/wide_r2/attention_bench.csv \
    --base 25 >$W/wide_columns.txt 2>&1
  mkdir -p $OUT/h200
  (BUNDLE=${BUNDLE:-p64b-bundle} OUT=$OUT/h200 timeout 300 bash bench/results/session63_2026-12-07/run2.sh \
    >$OUT/h200/stdout.txt 2>&1)
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
[[ -f $OUT/h200/summary.txt ]] && cat $OUT/h200/summary.txt
