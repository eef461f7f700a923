# Session 27, call 5 (perf-bundle 5ce09de, the final sources: call 4's plus one host-side helper
# shared by the two epilogues' route checks): gpu_golden_qwen3 and the served determinism check,
# then the Qwen3-8B-FP8 step at batch 1/4/16 with the q|k|v epilogue off and on (one round each),
# to see the fused path still taken.
#   scripts/device-bundle.sh --build build --bundle perf-bundle --xz --with-tokenizer \
#     --targets "lathe gpu_golden_qwen3"
set -uo pipefail
GOLDEN_TIMEOUT=420 scripts/device-perf.sh --steps "golden determinism" >$OUT/device_perf.txt 2>&1
echo "device-perf rc=$?"
grep -E "bundle commit|golden|determinism|PASS|FAIL|passed|preempt|IDENTICAL|DIFFER" $OUT/device-perf-summary.txt | head -30
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
for mode in off 4; do
  LATHE_QKV_FUSED_ROPE=$mode timeout 100 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy \
    --device cuda --batch-sizes 1,4,16 --input-len 1024 --output-len 32 >$OUT/step_$mode.txt 2>$OUT/step_$mode.log
  echo "rope=$mode rc=$? $(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $OUT/step_$mode.txt)"
done
grep -h "run the QK-norm" $OUT/step_4.log | head -1 | cut -c1-200
