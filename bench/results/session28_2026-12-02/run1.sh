# Session 28, call 1 (s28a-bundle, 63b63cc: the register ring's scaled fp8 decode): the FP8
# conversion tests, the GEMV suite (its new ScaledDecodeGivesTheExactDecodesBytes first, then the
# rest in 4 shards), then this build's kernel table in context (--after-norm) at m = 1, 4, 16 on
# every fp8 decode shape with the cuBLASLt FP8 peer beside it, two rounds. (Main's bench binary did
# not fit beside the tests: the kernel A/B is a later call.)
#   scripts/device-bundle.sh --build build --bundle s28a-bundle --xz \
#     --targets "lathe_bench_kernels gpu_cuda_gemv_test gpu_cuda_fp8_convert_test"
set -uo pipefail
b=$PWD/s28a-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
timeout 60 $b/bin/gpu_cuda_fp8_convert_test >$OUT/fp8_convert.log 2>&1
echo "fp8_convert rc=$? $(grep -h '^\[  PASSED  \]\|^\[  FAILED  \]' $OUT/fp8_convert.log | head -3)" >>$S
grep -h "Failure" -A4 $OUT/fp8_convert.log | head -20 >>$S
timeout 120 $b/bin/gpu_cuda_gemv_test --gtest_filter='*ScaledDecode*:*WideRange*' >$OUT/gemv_scaled.log 2>&1
echo "gemv scaled rc=$? $(grep -h '^\[  PASSED  \]\|^\[  FAILED  \]' $OUT/gemv_scaled.log | head -3) $((SECONDS - t0))s" >>$S
grep -h "Failure\|FAILED \]" -A4 $OUT/gemv_scaled.log | head -30 >>$S
pids=(); rc=0
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 240 $b/bin/gpu_cuda_gemv_test \
    --gtest_filter='-*ScaledDecode*:*WideRange*' >$W/gemv.$i.log 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
cat $W/gemv.*.log >$OUT/gemv_rest.log
echo "gemv rest rc=$rc passed $(grep -h '^\[  PASSED  \]' $W/gemv.*.log | awk '{n += $4} END {print n + 0}'), failed lines $(grep -c '^\[  FAILED  \]' $OUT/gemv_rest.log) $((SECONDS - t0))s" >>$S
grep -h "FAILED \]" $OUT/gemv_rest.log | head -10 >>$S
for r in 1 2; do
  timeout 120 $b/bin/lathe_bench_kernels --variants --variant-list auto --after-norm --shapes decode \
    --widths 1,4,16 --dtype fp8 >$W/kernels_r$r.txt 2>&1
  echo "kernels r$r rc=$? $((SECONDS - t0))s" >>$S
done
grep -h "ceiling\|GB/s" $W/kernels_r1.txt | head -3 >>$S
paste <(grep -E " fp8 +(1|4|16) (v:|cublas)" $W/kernels_r1.txt) <(grep -E " fp8 +(1|4|16) (v:|cublas)" $W/kernels_r2.txt | awk '{print $(NF-2), $NF}') >>$S
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
