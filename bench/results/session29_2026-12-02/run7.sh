# Session 29, call 7 (perf-bundle, the final sources: the register ring's tail through one
# for_each_sum helper): gpu_cuda_gemv_test and gpu_golden_qwen3, 4 shards each. (lathe, for the
# served determinism check, did not fit beside them; call 4 ran it on the same kernels before the
# refactor.)
#   scripts/device-bundle.sh --build build --bundle perf-bundle --xz --with-tokenizer \
#     --targets "gpu_cuda_gemv_test gpu_golden_qwen3"
set -uo pipefail
GOLDEN_TIMEOUT=420 scripts/device-perf.sh --steps "golden" >$OUT/device_perf.txt 2>&1
echo "device-perf rc=$?"
grep -E "bundle commit|gpu_|FAILED|split slots" $OUT/device-perf-summary.txt | head -30
