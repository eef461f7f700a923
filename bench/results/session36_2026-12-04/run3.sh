#!/usr/bin/env bash
# Session 36, call 3 (perf-bundle at the commit below: the KV block size defaults to 64). The served
# checks (scripts/device-perf.sh --steps determinism: outputs alone = beside 31 others on a default
# server, now 64-token blocks, and on the 64-block server of 16-token blocks that preempts),
# gpu_golden_qwen3 (its ModelRunner cases now at 64-token blocks, its step-by-step cases at 16),
# then the prefill benchmark at block sizes 64 and 16 (all three shapes, cuBLASLt reference in the
# same process) and the PyTorch SDPA peer on the same cells.
#   scripts/device-bundle.sh -j 2 --targets "lathe gpu_golden_qwen3 lathe_bench_prefill_attention" \
#     --bundle perf-bundle --with-tokenizer --xz
set -uo pipefail
real_out=$OUT
export OUT=/tmp/s36c3; rm -rf $OUT; mkdir -p $OUT
t0=$SECONDS
scripts/device-perf.sh --steps determinism
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary3.txt
echo "commit $(cat $b/COMMIT); determinism done at $((SECONDS - t0))s" >$S
timeout 120 $b/bin/gpu_golden_qwen3 >$OUT/golden.txt 2>&1
echo "gpu_golden_qwen3 rc=$? $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $OUT/golden.txt | tr '\n' ' ')" >>$S
grep -E '^\[  FAILED  \]|Failure' $OUT/golden.txt | head -10 >>$S
for bs in 64 16; do
  timeout 80 $b/bin/lathe_bench_prefill_attention --block-size $bs --out $OUT >$OUT/bench_bs$bs.txt 2>&1
  echo "== bench bs=$bs rc=$? $((SECONDS - t0))s" >>$S
  grep -v "gemm pin" $OUT/bench_bs$bs.txt >>$S
  cp $OUT/prefill_attention.csv $OUT/prefill_attention_bs$bs.csv 2>/dev/null
done
timeout 100 python3 tools/peers/sdpa_prefill.py --out $OUT/sdpa_prefill.csv >$OUT/sdpa_prefill.txt 2>&1
echo "== sdpa_prefill rc=$? $((SECONDS - t0))s" >>$S
cat $OUT/sdpa_prefill.txt >>$S
tar -C $OUT -cJf $real_out/all.tar.xz .
cat $OUT/summary.txt
cat $S
