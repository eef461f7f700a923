#!/usr/bin/env bash
# Session 17, call 1: other register-ring grids and ring depths for the small decode GEMVs
# (q|k|v, o, down) timed inside the real step (decode graphs, chained launches, early weights)
# through LATHE_GEMV_SHAPE_VARIANTS; the byte-equality tier tests under the candidates first.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $S
echo "bundle $(cat $b/COMMIT)" >>$S
for v in ring:k8:s4:g16 ring:k11:g16:b3; do
  LATHE_GEMV_TEST_VARIANT_FP8=$v timeout 100 $b/bin/gpu_cuda_gemv_test --gtest_filter='*EveryRowOfEveryTier*:*MatchesFloat64*' \
    >$W/gemvtest_${v//:/_}.log 2>&1
  echo "gemv tests as $v: rc=$? $(grep -E '^\[  (PASSED|FAILED)' $W/gemvtest_${v//:/_}.log | tr '\n' ' ')" >>$S
done
run() {  # name, model, batches, overrides, [extra env]
  local name=$1 model=$2 batches=$3 ov=$4
  env ${5:-} LATHE_GEMV_SHAPE_VARIANTS="$ov" timeout 150 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/$name.txt 2>$W/$name.log
  printf '%-22s rc=%s %s\n' "$name" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/$name.txt)" >>$S
  grep -h "overridden per shape\|does not parse" $W/$name.log | head -2 | sed 's/^.*cuda backend: /    /' >>$S
}
O=fp8/4096x4096; Q=fp8/6144x4096; D=fp8/4096x12288
for r in 1 2; do
  run 8b_base_r$r Qwen3-8B-FP8 1,4,16 ""
  run 8b_o_k8s4_r$r Qwen3-8B-FP8 1,4,16 "$O=ring:k8:s4:g16"
  run 8b_o_k8s2_r$r Qwen3-8B-FP8 1,4,16 "$O=ring:k8:g16"
  run 8b_o_k11b3_r$r Qwen3-8B-FP8 1,4,16 "$O=ring:k11:g16:b3"
  run 8b_o_k5s4_r$r Qwen3-8B-FP8 1,4,16 "$O=ring:k5:s4:g16"
  run 8b_q_k5s4_r$r Qwen3-8B-FP8 1,4,16 "$Q=ring:k5:s4:g16"
  run 8b_q_k8b3_r$r Qwen3-8B-FP8 1,4,16 "$Q=ring:k8:g16:b3"
  run 8b_d_k8s4_r$r Qwen3-8B-FP8 1,4,16 "$D=ring:k8:s4:g16"
  run 8b_d_k12b3_r$r Qwen3-8B-FP8 1,4,16 "$D=ring:k12:g16:b3"
done
run 8b_o_k8s4_noearly Qwen3-8B-FP8 1,4,16 "$O=ring:k8:s4:g16" LATHE_GEMV_EARLY_WEIGHTS=off
run 8b_base_noearly Qwen3-8B-FP8 1,4,16 "" LATHE_GEMV_EARLY_WEIGHTS=off
O=fp8/5120x8192; Q=fp8/10240x5120; D=fp8/5120x25600
run 32b_base Qwen3-32B-FP8 1,16 ""
run 32b_o_k6s4 Qwen3-32B-FP8 1,16 "$O=ring:k6:s4:g16"
run 32b_o_k9b3 Qwen3-32B-FP8 1,16 "$O=ring:k9:g16:b3"
run 32b_q_k3s4 Qwen3-32B-FP8 1,16 "$Q=ring:k3:s4:g16"
run 32b_q_k4b3 Qwen3-32B-FP8 1,16 "$Q=ring:k4:g16:b3"
run 32b_d_k9b3 Qwen3-32B-FP8 1,16 "$D=ring:k9:g16:b3"
tar czf $OUT/work.tgz -C $W .
cat $S
