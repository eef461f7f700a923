# Session 25, call 3 (perf-bundle 2171cdf: the final code, ffn_fused_norm defaulting to 4 rows):
# gpu_golden_qwen3 and the served determinism check (scripts/device-perf.sh: a request alone, at
# batch 1 the fused path, against beside 31 others, and on a second server that preempts),
# gpu_cuda_op_test (the norm kernels against the CPU reference), then decode steps with the
# fusion off against the default, alternated, two rounds: Qwen3-8B-FP8 batch 1/2/4/16,
# Qwen3-32B-FP8 batch 1/4.
#   scripts/device-bundle.sh --build build --bundle perf-bundle --xz --with-tokenizer \
#     --targets "lathe gpu_golden_qwen3 gpu_cuda_op_test"
set -uo pipefail
GOLDEN_TIMEOUT=420 scripts/device-perf.sh --steps "golden determinism" >$OUT/device_perf.txt 2>&1
echo "device-perf rc=$?"
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
grep -E "golden|determinism|PASS|FAIL|passed|preempt" $OUT/device_perf.txt | head -20 >>$S
timeout 200 $b/bin/gpu_cuda_op_test >$OUT/gpu_cuda_op_test.log 2>&1
echo "gpu_cuda_op_test rc=$? $(grep -h '^\[  PASSED  \]\|^\[  FAILED  \]' $OUT/gpu_cuda_op_test.log | head -3)" >>$S
t0=$SECONDS
step() {  # tag, env (or -), model, batches
  local tag=$1 envs=$2 model=$3 batches=$4
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-24s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  step 8B-FP8_fn0_r$r LATHE_FFN_FUSED_NORM=0 Qwen3-8B-FP8 1,2,4,16
  step 8B-FP8_default_r$r - Qwen3-8B-FP8 1,2,4,16
  step 32B-FP8_fn0_r$r LATHE_FFN_FUSED_NORM=0 Qwen3-32B-FP8 1,4
  step 32B-FP8_default_r$r - Qwen3-32B-FP8 1,4
done
grep -h "ffn_fused_norm" $W/s_8B-FP8_default_r1.log | head -2 >>$S
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
