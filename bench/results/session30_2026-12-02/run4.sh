# Session 30, call 4 (perf-bundle, the final sources: session 29's 64-bit split slots, every split
# writing all 128 rows of its block and the sum reading and emptying them all): gpu_cuda_gemv_test
# (new: 203x2048, a split whose last row block has 75 rows) and gpu_golden_qwen3, 4 shards each.
#   scripts/device-bundle.sh --build build --bundle perf-bundle --xz --with-tokenizer \
#     --targets "gpu_cuda_gemv_test gpu_golden_qwen3"
set -uo pipefail
GOLDEN_TIMEOUT=420 scripts/device-perf.sh --steps "golden" >$OUT/device_perf.txt 2>&1
echo "device-perf rc=$?"
grep -E "bundle commit|gpu_|FAILED|split slots" $OUT/device-perf-summary.txt | head -30
