#!/usr/bin/env bash
# Session 67, call 1 (ran on an H100: call1/). Bundle: main
# 7e537fe (the reduce by warps loading up to 16 splits a lane in one round trip at head dim 128),
# `scripts/device-bundle.sh -j 2 --bundle p67-bundle --xz --targets "lathe lathe_bench_attention
# lathe_bench_kernels gpu_attention gpu_golden_qwen3"` (~22 MiB beside the ~30 MiB tree).
# Session 66's run2.sh (the reduce by warps in registers against the per-head CTAs), reordered so
# that a run cut short keeps the comparisons: 1. the serve kernels, heads / warps in two processes,
# two rounds; 2. decode steps of Qwen3-8B-FP8 at 1k, batch 1 / 16 / 64, heads / warps alternated,
# two rounds, then batch 1 / 16 with chaining off (and Qwen3-32B-FP8 on an H200); 3. PyTorch SDPA
# and the issue-5 tables of both arms; 4. the whole gpu_attention suite and gpu_golden_qwen3 under
# warps; 5. on an H200 only (the issues' device, no GEMV figures since session 50): the fp8 GEMV
# table with cuBLASLt FP8 in the same process.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p67-bundle}"
export LATHE_TEST_DEVICE=cuda
# The work files outside $OUT (only a few files under it come back): $OUT/work.tar.xz carries them,
# packed after each part.
rm -rf "$W"
W=$(mktemp -d)
h200=0
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && h200=1
# Batch 1 of the issue-5 tables as the GPU's target declares it (declared_issue5_tables).
if ((h200)); then
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
for r in 1 2; do  # speed-up = heads' time / warps'; the output hashes must agree in every cell
  python3 bench/attention/compare_runs.py $W/reduce_warps_r$r/attention_bench.csv \
    $W/reduce_heads_r$r/attention_bench.csv --summary >$W/reduce_warps_r$r.txt 2>&1
  echo "compare warps r$r rc=$? $(tail -1 $W/reduce_warps_r$r.txt)" >>$S
done
BATCHES=1,16,64
for r in 1 2; do
  for arm in heads warps; do
    LATHE_ATTN_SPLIT_REDUCE=$arm LIMIT=${STEP_LIMIT:-200} step_arm "8b_fp8_${arm}_r$r" Qwen3-8B-FP8 ""
  done
done
# Chaining off (LATHE_CHAINED_LAUNCH=off), batch 1 and 16: whether a step lost to warps is the
# kernels' own time or how the reduce's launch overlaps the GEMV chained after it.
for arm in heads warps; do
  LATHE_CHAINED_LAUNCH=off LATHE_ATTN_SPLIT_REDUCE=$arm BATCHES=1,16 LIMIT=${STEP_LIMIT:-200} \
    step_arm "8b_fp8_${arm}_unchained" Qwen3-8B-FP8 ""
done
if ((h200)); then
  for arm in heads warps; do
    LATHE_ATTN_SPLIT_REDUCE=$arm LIMIT=260 step_arm "32b_fp8_$arm" Qwen3-32B-FP8 ""
  done
fi
tar -C $W -cJf $OUT/work.tar.xz .  # again at the end: what a cut-off run keeps
PYTHONUNBUFFERED=1 timeout 90 python3 tools/peers/sdpa_decode.py --out "$W/sdpa.csv" >"$W/sdpa.log" 2>&1
echo "== sdpa rc=$? $((SECONDS - t0))s" >>"$S"
for r in 1 2; do
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
grep -E "^\S+\s+(bf16|fp8)\s+(1|16|64)\s+1024\s+auto\+pack\s" $W/reduce_warps_r1.txt | head -18 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
(
  export LATHE_ATTN_SPLIT_REDUCE=warps
  echo "attention (warps) $(scripts/gtest-shards.sh $b/bin/gpu_attention 8 ${SHARD_LIMIT:-200} $W/attention.txt \
    --gtest_brief=1) $((SECONDS - t0))s" >>$S
  grep -E '^\[  FAILED  \]|Failure' $W/attention.txt | head -10 >>$S
  SUITE_TIMEOUT=160 gpu_suite golden gpu_golden_qwen3
)
tar -C $W -cJf $OUT/work.tar.xz .
if ((h200)); then
  fp8_table
  tar -C $W -cJf $OUT/work.tar.xz .
fi
cat $S
