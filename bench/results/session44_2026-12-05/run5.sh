#!/usr/bin/env bash
# Session 44, call 5 (H100): decode attention on the H100 for the h100 target's declaration
# (targets/h100.toml said "packing off, slices off until measured on this part"). Main d94e795
# (src/ = ebda34e). gpu_attention's decode tests in 6 shards (their first H100 run), then the serve
# kernels' table for auto, auto+pack and auto+pack+slices (BF16 and FP8 KV, every shape, batch and
# context), SDPA in the same call, and the issue-5 targets tables.
#   scripts/device-bundle.sh -j 2 --bundle attn-bundle --targets "gpu_attention lathe_bench_attention" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-attn-bundle}"
mkdir -p $W/serve
F='-*Prefill*:*Legacy*'
echo "gpu_attention: $(scripts/gtest-shards.sh $b/bin/gpu_attention 6 240 $W/attention.txt --gtest_filter="$F")" >>$S
grep -E '^\[  FAILED  \]|Failure|Which is|rel_rms' $W/attention.txt | head -20 >>$S
echo "tests done $((SECONDS - t0))s" >>$S
timeout 200 $b/bin/lathe_bench_attention --out $W/serve --kernels serve --policies auto,auto+pack,auto+pack+slices \
  >$W/serve/bench.txt 2>&1
echo "== bench rc=$? $((SECONDS - t0))s" >>$S
PYTHONUNBUFFERED=1 timeout 120 python3 tools/peers/sdpa_decode.py --out $W/sdpa.csv >$W/sdpa.log 2>&1
echo "== sdpa rc=$? $((SECONDS - t0))s" >>$S
for kv in bf16 fp8; do
  for pol in auto auto+pack; do
    b1=$pol; [[ $pol == auto+pack ]] && b1=auto+pack+slices
    python3 bench/attention/targets.py $W/serve/attention_bench.csv $W/sdpa.csv --policy $pol --b1-policy $b1 --kv $kv \
      >$W/targets_${kv}_$pol.txt 2>&1
    echo "== targets $kv $pol (batch 1: $b1)" >>$S; tail -3 $W/targets_${kv}_$pol.txt >>$S
  done
done
cp $W/serve/attention_bench.csv $W/sdpa.csv $OUT/ 2>/dev/null
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
