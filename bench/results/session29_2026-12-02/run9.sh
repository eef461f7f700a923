# Session 29, call 9 (perf-bundle, the final sources): gpu_cuda_op_test (its Linear case takes the
# GEMV tiers) and gpu_batch_invariance, 4 shards each.
#   scripts/device-bundle.sh --build build --bundle perf-bundle --xz --with-tokenizer \
#     --targets "gpu_cuda_op_test gpu_batch_invariance"
set -uo pipefail
GOLDEN_TIMEOUT=420 scripts/device-perf.sh --steps "golden" >$OUT/device_perf.txt 2>&1
echo "device-perf rc=$?"
grep -E "bundle commit|gpu_|FAILED" $OUT/device-perf-summary.txt | head -30
