# Session 30, call 6 (perf-bundle, the final sources: session 29's GEMV kernels, sm_90a SASS
# identical to main dcedecb's; the register ring no longer splits K for an odd n):
# gpu_cuda_gemv_test (203x2048: odd n, no split) and gpu_cuda_op_test (its Linear case takes the
# GEMV tiers), 4 shards each.
#   scripts/device-bundle.sh --build build --bundle perf-bundle --xz --with-tokenizer \
#     --targets "gpu_cuda_gemv_test gpu_cuda_op_test"
set -uo pipefail
GOLDEN_TIMEOUT=420 scripts/device-perf.sh --steps "golden" >$OUT/device_perf.txt 2>&1
echo "device-perf rc=$?"
grep -E "bundle commit|gpu_|FAILED|split slots" $OUT/device-perf-summary.txt | head -30
