# Session 29, call 1 (s29a-bundle: the register ring's K split summed from tagged slots instead of a
# counter): gpu_cuda_gemv_test in 4 shards (every row of every tier byte-equal to the 1-row kernel,
# the float64 reference, and the new check that every split slot is empty after each test), then
# this build's kernel table at m = 1, 4, 16 in context with cuBLASLt FP8 in the same process, two
# rounds. (The layer-chain probes of main and of this build, 15 MB each, did not fit beside them.)
#   scripts/device-bundle.sh --build build --bundle s29a-bundle --xz \
#     --targets "gpu_cuda_gemv_test lathe_bench_kernels"
set -uo pipefail
b=$PWD/s29a-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
pids=(); rc=0
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 240 $b/bin/gpu_cuda_gemv_test >$W/gemv.$i.log 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
cat $W/gemv.*.log >$OUT/gemv_test.log
echo "gpu_cuda_gemv_test rc=$rc passed $(grep -h '^\[  PASSED  \]' $W/gemv.*.log | awk '{n += $4} END {print n + 0}'), failed lines $(grep -c '^\[  FAILED  \]' $OUT/gemv_test.log) $((SECONDS - t0))s" >>$S
grep -h "FAILED \]\|split slots left" $OUT/gemv_test.log | head -20 >>$S
for r in 1 2; do
  timeout 120 $b/bin/lathe_bench_kernels --variants --variant-list auto --after-norm --shapes decode \
    --widths 1,4,16 --dtype fp8 >$W/kernels_r$r.txt 2>&1
  echo "kernels r$r rc=$? $((SECONDS - t0))s" >>$S
done
grep -h "ceiling\|GB/s" $W/kernels_r1.txt | head -3 >>$S
paste <(grep -E " fp8 +(1|4|16) (v:|cublas)" $W/kernels_r1.txt) <(grep -E " fp8 +(1|4|16) (v:|cublas)" $W/kernels_r2.txt | awk '{print $(NF-2), $NF}') >>$S
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
