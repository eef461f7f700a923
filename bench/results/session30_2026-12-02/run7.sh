# Session 30, call 7 (perf-bundle): gpu_batch_invariance on the final sources (4 shards), then, last,
# main dcedecb's GEMV kernels and policy with the new odd-n test case (main_gemv_test: main's
# gpu_cuda_gemv_test plus the two 203x2048 cases, built from /tmp/mainsrc) under a 90 s limit: the
# register ring splits 203x2048 four ways there, and tier 4's slot pair (74, 75) of the last row
# block (75 rows) waits for row 75's slot, which no split writes. rc 124 = the limit hit.
#   scripts/device-bundle.sh --build build --bundle perf-bundle --xz --with-tokenizer \
#     --targets "gpu_batch_invariance" --add main_gemv_test=/tmp/mainsrc/build/tests/gpu/cuda/gpu_cuda_gemv_test
set -uo pipefail
GOLDEN_TIMEOUT=420 scripts/device-perf.sh --steps "golden" >$OUT/device_perf.txt 2>&1
echo "device-perf rc=$?"
grep -E "bundle commit|gpu_|FAILED" $OUT/device-perf-summary.txt | head -30
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
t0=$SECONDS
timeout 90 $b/bin/main_gemv_test --gtest_filter='*n203*' >$OUT/main_gemv_test_n203.txt 2>&1
echo "main_gemv_test *n203* rc=$? $((SECONDS - t0))s"
grep -E "^\[ RUN|^\[       OK|^\[  FAILED|^\[  PASSED" $OUT/main_gemv_test_n203.txt | head -20
