# Session 27, call 3 (perf-bundle: fused QK-norm/RoPE at decode steps of <= 4 rows by default):
# gpu_golden_qwen3 and the served determinism check; then Qwen3-8B-FP8 steps at batch 8/16/32 with
# the epilogue off, on for every width with tiers 4/16 releasing attention at their start (the
# first form, call 2), and on with them releasing after their main loop (LATHE_QKV_ROPE_RELEASE),
# alternated, two rounds; batch 1/2/4 default against off, one round.
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
  step wide_off_r$r Qwen3-8B-FP8 8,16,32 LATHE_QKV_FUSED_ROPE=off
  step wide_start_r$r Qwen3-8B-FP8 8,16,32 LATHE_QKV_FUSED_ROPE=32
  step wide_loop_r$r Qwen3-8B-FP8 8,16,32 LATHE_QKV_FUSED_ROPE=32 LATHE_QKV_ROPE_RELEASE=loop
done
step narrow_off Qwen3-8B-FP8 1,2,4 LATHE_QKV_FUSED_ROPE=off
step narrow_default Qwen3-8B-FP8 1,2,4
grep -h "ROPE_RELEASE\|releases attention\|run the QK-norm" $W/s_wide_loop_r1.log | head -3
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
