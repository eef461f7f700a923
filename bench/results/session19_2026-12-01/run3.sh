# Session 19, call 3 (branch gemv-deferred-sum): the decode GEMV's K-split sums added by the
# consuming add_rms_norm / SwiGLU. (a) every GPU suite in the bundle (gpu_cuda_op_test with the new
# byte test, gpu_cuda_gemv_test, gpu_golden_qwen3: decode bytes alone = beside a prefill chunk,
# i.e. deferred = plain path); (b) decode steps, LATHE_GEMV_DEFER_SUM=off against on, same binary,
# alternated; (c) the served determinism check (outputs alone = beside 31 others, preemption).
set -uo pipefail
GOLDEN_TIMEOUT=300 bash scripts/device-perf.sh --steps "golden"
cp $OUT/summary.txt $OUT/golden_summary.txt; cat $OUT/golden_summary.txt
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/steps.txt; W=/tmp/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
step() {  # tag, model, batches, env...
  local tag=$1 model=$2 batches=$3; shift 3
  env "$@" timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda --batch-sizes $batches \
    --input-len 1024 --output-len 32 --out $W/s_$tag.json >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-18s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  step 8fp8_off_r$r Qwen3-8B-FP8 1,4,16 LATHE_GEMV_DEFER_SUM=off
  step 8fp8_on_r$r Qwen3-8B-FP8 1,4,16
done
step 8bf16_off Qwen3-8B 1,4,16 LATHE_GEMV_DEFER_SUM=off
step 8bf16_on Qwen3-8B 1,4,16
step 32fp8_off Qwen3-32B-FP8 1,4,16 LATHE_GEMV_DEFER_SUM=off
step 32fp8_on Qwen3-32B-FP8 1,4,16
step 32bf16_off Qwen3-32B 1,4 LATHE_GEMV_DEFER_SUM=off
step 32bf16_on Qwen3-32B 1,4
grep -h "K-split sums" $W/s_8fp8_on_r1.log $W/s_8fp8_off_r1.log | head -2 >>$S
cat $S
bash scripts/device-perf.sh --steps "determinism" >/dev/null 2>&1
tar czf $OUT/work.tgz -C $W .
echo "--- determinism"; tail -4 $OUT/summary.txt
