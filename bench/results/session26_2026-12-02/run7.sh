# Session 26, call 7 (perf-bundle, the final sources: 6327f7f's kernels with the register-ring
# kernel moved to its own header, SASS byte-identical, and CudaBackend split into three files):
# gpu_golden_qwen3 and the served determinism check, then the Qwen3-8B-FP8 step at batch 1/4/16
# (one round; no base binary in this call).
#   scripts/device-bundle.sh --build build --bundle perf-bundle --xz --with-tokenizer \
#     --targets "lathe gpu_golden_qwen3"
set -uo pipefail
GOLDEN_TIMEOUT=420 scripts/device-perf.sh --steps "golden determinism" >$OUT/device_perf.txt 2>&1
echo "device-perf rc=$?"
grep -E "bundle commit|golden|determinism|PASS|FAIL|passed|preempt|IDENTICAL|DIFFER" $OUT/device-perf-summary.txt | head -30
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
timeout 100 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
  --batch-sizes 1,4,16 --input-len 1024 --output-len 32 >$OUT/step_8b_fp8.txt 2>$OUT/step_8b_fp8.log
echo "step rc=$? $(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $OUT/step_8b_fp8.txt)"
