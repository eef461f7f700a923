#!/usr/bin/env bash
# Written in session 66 for the next GPU call: the reduce by warps merging in registers (main after
# session 66; LATHE_ATTN_SPLIT_REDUCE=heads | warps) against the per-head CTAs, as run1.sh measured
# its shared-memory version. Bundle: `scripts/device-bundle.sh -j 2 --bundle p66b-bundle --xz
# --targets "lathe lathe_bench_attention gpu_attention gpu_golden_qwen3"`.
# 1. the serve kernels (auto+pack and the declared batch-1 slices, both KV dtypes, the three issue
#    shapes, batch 1-64, 1k-64k), heads / warps in two processes, two rounds:
#    bench/attention/compare_runs.py --summary of warps against heads per round (output
#    hashes equal in every cell; speed-up), and the issue-5 tables of heads and of warps against
#    PyTorch SDPA run in the same call;
# 2. the whole gpu_attention suite (8 shards; its SplitReduceIsByteNeutral sets each reduce itself:
#    warps against heads, byte for byte) and gpu_golden_qwen3 under `warps` (every
#    determinism and co-batch test with the reduce by warps);
# 3. decode steps, Qwen3-8B-FP8 (and Qwen3-32B-FP8 with WITH_32B=1) at 1k, batch 1, 16 and 64, heads /
#    warps alternated, two rounds (the time left permitting: STEP_LIMIT).
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p66b-bundle}"
export LATHE_TEST_DEVICE=cuda
# The policies the issue-5 tables take (declared_issue5_tables, scripts/bundle-env.sh): batch 1 as
# the GPU's target declares it (h200: auto slices for both KV dtypes; h100: FP8 auto:2).
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  b1_bf16=auto+pack+slices b1_fp8=auto+pack+slices slice_args=()
else
  b1_bf16=auto+pack b1_fp8=auto+pack+slicesauto:2 slice_args=(--slices auto:2)
fi
for r in 1 2; do
  for arm in heads warps; do
    LATHE_ATTN_SPLIT_REDUCE=$arm attn_bench "reduce $arm r$r" "$W/reduce_${arm}_r$r" 90 --kernels serve \
      --policies auto+pack,auto+pack+slices "${slice_args[@]}"
  done
done
PYTHONUNBUFFERED=1 timeout 90 python3 tools/peers/sdpa_decode.py --out "$W/sdpa.csv" >"$W/sdpa.log" 2>&1
echo "== sdpa rc=$? $((SECONDS - t0))s" >>"$S"
for r in 1 2; do  # speed-up = heads' time / the arm's; the output hashes must agree in every cell
  for arm in warps; do
    python3 bench/attention/compare_runs.py $W/reduce_${arm}_r$r/attention_bench.csv \
      $W/reduce_heads_r$r/attention_bench.csv --summary >$W/reduce_${arm}_r$r.txt 2>&1
    echo "compare $arm r$r rc=$? $(tail -1 $W/reduce_${arm}_r$r.txt)" >>$S
  done
  for arm in heads warps; do  # the issue-5 tables of each arm, SDPA from this call
    for kv in bf16 fp8; do
      b1=b1_$kv
      python3 bench/attention/targets.py "$W/reduce_${arm}_r$r/attention_bench.csv" "$W/sdpa.csv" \
        --policy auto+pack --b1-policy "${!b1}" --kv $kv >"$W/targets_${arm}_${kv}_r$r.txt" 2>&1
      echo "== targets $arm $kv r$r" >>"$S"
      tail -3 "$W/targets_${arm}_${kv}_r$r.txt" >>"$S"
    done
  done
done
grep -E "^\S+\s+(bf16|fp8)\s+(16|64)\s+1024\s+auto\+pack\s" $W/reduce_warps_r1.txt | head -12 >>$S
tar -C $W -cJf $OUT/work.tar.xz .  # again at the end: what a cut-off run keeps
(
  export LATHE_ATTN_SPLIT_REDUCE=warps
  echo "attention (warps) $(scripts/gtest-shards.sh $b/bin/gpu_attention 8 ${SHARD_LIMIT:-200} $W/attention.txt \
    --gtest_brief=1) $((SECONDS - t0))s" >>$S
  grep -E '^\[  FAILED  \]|Failure' $W/attention.txt | head -10 >>$S
  SUITE_TIMEOUT=120 gpu_suite golden gpu_golden_qwen3
)
BATCHES=1,16,64
for r in 1 2; do
  for arm in heads warps; do
    export LATHE_ATTN_SPLIT_REDUCE=$arm
    LIMIT=${STEP_LIMIT:-480} step_arm "8b_fp8_${arm}_r$r" Qwen3-8B-FP8 ""
    [[ -n ${WITH_32B:-} ]] && LIMIT=${STEP_LIMIT:-480} step_arm "32b_fp8_${arm}_r$r" Qwen3-32B-FP8 ""
  done
done
unset LATHE_ATTN_SPLIT_REDUCE
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
