# Session 27, call 4 (perf-bundle, the final sources: the q|k|v epilogue for decode steps of <= 4
# rows, LATHE_QKV_ROPE_RELEASE removed): gpu_golden_qwen3 and the served determinism check, then
# the Qwen3-8B-FP8 step at batch 1/4/16 and the Qwen3-32B-FP8 step at batch 1, the epilogue off
# (LATHE_QKV_FUSED_ROPE=off) against the default, alternated, two rounds.
#   scripts/device-bundle.sh --build build --bundle perf-bundle --xz --with-tokenizer \
#     --targets "lathe gpu_golden_qwen3"
set -uo pipefail
GOLDEN_TIMEOUT=420 scripts/device-perf.sh --steps "golden determinism" >$OUT/device_perf.txt 2>&1
echo "device-perf rc=$?"
grep -E "bundle commit|golden|determinism|PASS|FAIL|passed|preempt|IDENTICAL|DIFFER" $OUT/device-perf-summary.txt | head -30
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
W=$OUT/work; mkdir -p $W
t0=$SECONDS
step() {  # tag, model, batches, env...
  local tag=$1 model=$2 batches=$3; shift 3
  env "$@" timeout 150 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-24s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)"
}
for r in 1 2; do
  step 8B-FP8_off_r$r Qwen3-8B-FP8 1,4,16 LATHE_QKV_FUSED_ROPE=off
  step 8B-FP8_default_r$r Qwen3-8B-FP8 1,4,16
done
for r in 1 2; do
  step 32B-FP8_off_r$r Qwen3-32B-FP8 1 LATHE_QKV_FUSED_ROPE=off
  step 32B-FP8_default_r$r Qwen3-32B-FP8 1
done
grep -h "qkv_fused_rope\|run the QK-norm" $W/s_8B-FP8_default_r1.log | head -2 | cut -c1-250
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
