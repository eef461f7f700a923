# Session 19, call 6 (main's final code, the acq_rel split-K arrival of ee54f81): gpu_cuda_op_test,
# gpu_batch_invariance, the served determinism check, and the Qwen3-32B BF16 steps call 5 did
# not run.
set -uo pipefail
GOLDEN_TIMEOUT=300 bash scripts/device-perf.sh --steps "golden determinism"
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
timeout 150 $b/bin/lathe bench latency configs/Qwen3-32B --load-format dummy --device cuda --batch-sizes 1,4 \
  --input-len 1024 --output-len 32 >$OUT/s_32bf16.txt 2>$OUT/s_32bf16.log
echo "32bf16 rc=$? $(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $OUT/s_32bf16.txt)" >>$OUT/device-perf-summary.txt
cat $OUT/device-perf-summary.txt
