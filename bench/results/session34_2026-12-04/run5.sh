#!/usr/bin/env bash
# Session 34, call 5 (perf-bundle at the commit it names, the final prefill kernel): the
# model-level GPU suites, scripts/device-perf.sh --steps golden (4 shards each): gpu_golden_qwen3
# (every tiny fixture's CUDA logits against the f32 HF reference, greedy continuations, decode
# bytes alone / beside a row / beside a prefill chunk, chunked prefill and graph replays
# byte-identical) and gpu_batch_invariance; then lathe_bench_prefill_attention and the PyTorch SDPA
# peer (tools/peers/sdpa_prefill.py) in the same call.
#   scripts/device-bundle.sh -j 2 --targets "gpu_golden_qwen3 gpu_batch_invariance" --bundle perf-bundle --xz \
#     --add lathe_bench_prefill_attention=build-device/bench/attention/lathe_bench_prefill_attention
set -uo pipefail
real_out=$OUT
export OUT=/tmp/s34c5; rm -rf $OUT; mkdir -p $OUT
b=$PWD/perf-bundle
scripts/device-perf.sh --steps golden
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/peer_summary.txt
timeout 120 $b/bin/lathe_bench_prefill_attention --out $OUT >$OUT/prefill_bench.txt 2>&1
echo "== lathe_bench_prefill_attention rc=$?" >>$S
grep -v "gemm pin" $OUT/prefill_bench.txt >>$S
timeout 150 python3 tools/peers/sdpa_prefill.py --out $OUT/sdpa_prefill.csv >$OUT/sdpa_prefill.txt 2>$OUT/sdpa_prefill.log
echo "== sdpa_prefill rc=$?" >>$S
cat $OUT/sdpa_prefill.txt >>$S
tar -C $OUT -cJf $real_out/all.tar.xz .
cp $S $real_out/peer_summary.txt
cat $S
