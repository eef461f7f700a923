# Session 24, call 1 (prepared in session 23; branch wip/gemv-wg-narrow, not for main as is):
# session 23 made the 16-row GEMV tier's warpgroup MMA (":wg") `auto` on Qwen3-8B gate|up (in
# context 37.7 -> 31.3 us at m = 8, 39.6 -> 35.2 us at m = 16). Does the same help tiers 1 and 4
# there (n8 wgmma, 8 steps of x per buffer)? The branch runs ":wg" in tiers 1 and 4 when
# LATHE_DIAG_WG_NARROW=1 (and the shape's variant has :wg, as auto's 8B gate|up now does). Every
# :wg instantiation of the branch also refills its register ring after computing (step 2b).
# Bundle from this branch's build (worktree /work/wgn in session 23), with main's GEMV test binary
# (main's new case WarpgroupMmaRowsAreByteEqualToTheSingleRowKernel, b0138a7, never run on a GPU):
#   scripts/device-bundle.sh --build build --bundle wgn-bundle \
#     --targets "lathe gpu_cuda_gemv_test lathe_bench_kernels" --xz \
#     --add gpu_cuda_gemv_test_main=/work/main/build/tests/gpu/cuda/gpu_cuda_gemv_test \
#     --add lathe_main=/work/main/build/lathe      (main's build at 998ac59)
# Run from the repository root with carry ["wgn-bundle"]; about 250 s.
set -uo pipefail
b=$PWD/wgn-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
t0=$SECONDS
# 0. Main's GEMV suite as the default (its new :wg case), 4 shards.
pids=(); rc=0
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 200 $b/bin/gpu_cuda_gemv_test_main >$W/gemv_main.$i.log 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
cat $W/gemv_main.*.log >$OUT/gpu_cuda_gemv_test_main.log
echo "main's gpu_cuda_gemv_test rc=$rc passed $(grep -h '^\[  PASSED  \]' $W/gemv_main.*.log | awk '{n += $4} END {print n + 0}'), failed lines $(grep -c '^\[  FAILED  \]' $OUT/gpu_cuda_gemv_test_main.log)" >>$S
# 1. Every tier under auto:wg with the narrow tiers on (rows byte-equal to m = 1, float64 bounds).
pids=(); rc=0
for i in 0 1 2 3; do
  LATHE_DIAG_WG_NARROW=1 LATHE_GEMV_TEST_VARIANT_FP8=auto:wg LATHE_GEMV_TEST_VARIANT_BF16=auto:wg \
    GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 200 $b/bin/gpu_cuda_gemv_test >$W/gemv.$i.log 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
cat $W/gemv.*.log >$OUT/gpu_cuda_gemv_test_narrow.log
echo "gpu_cuda_gemv_test narrow auto:wg rc=$rc passed $(grep -h '^\[  PASSED  \]' $W/gemv.*.log | awk '{n += $4} END {print n + 0}'), failed lines $(grep -c '^\[  FAILED  \]' $OUT/gpu_cuda_gemv_test_narrow.log)" >>$S
# 2. In context, m = 1 and 4: auto (tier 1/4 mma.sync) against auto:wg with the narrow tiers; peers beside.
for narrow in 0 1; do
  LATHE_DIAG_WG_NARROW=$narrow timeout 150 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:wg \
    --after-norm --shapes decode --widths 1,4 --dtype fp8 >$W/kernels_narrow$narrow.txt 2>&1
  echo "kernels narrow=$narrow rc=$? $((SECONDS - t0))s" >>$S
  grep -E " (1|4) (v:|cublas)" $W/kernels_narrow$narrow.txt >>$S
done
# 2b. The branch's 16-row :wg refills its ring after computing at two CTAs per SM too (main refills
#     first there, and :wg measured slower than mma.sync on those shapes): auto against auto:wg at
#     m = 8 and 16 on every decode shape, as session 23's call 4 did on main.
timeout 150 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:wg --after-norm --shapes decode \
  --widths 8,16 --dtype fp8 >$W/kernels_wide.txt 2>&1
echo "kernels m = 8, 16 rc=$? $((SECONDS - t0))s" >>$S
grep -E " (8|16) (v:|cublas)" $W/kernels_wide.txt >>$S
# 3. Qwen3-8B-FP8 steps at batch 1-4 (auto's gate|up has :wg; narrow decides tiers 1 and 4), two rounds.
step() {  # tag, env, batches
  env $2 timeout 100 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
    --batch-sizes $3 --input-len 1024 --output-len 32 >$W/s_$1.txt 2>$W/s_$1.log
  printf '%-24s rc=%s %4ss %s\n' "$1" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$1.txt)" >>$S
}
for r in 1 2; do
  step narrow0_r$r LATHE_DIAG_WG_NARROW=0 1,2,4
  step narrow1_r$r LATHE_DIAG_WG_NARROW=1 1,2,4
done
# 4. Main 998ac59 (the :wg helpers moved, 1936d4a, never timed) against the branch (5e19ad0's :wg
#    code plus the refill order) at the batches that run the 16-row tier.
stepm() {  # tag, binary, batches
  timeout 100 $b/bin/$2 bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
    --batch-sizes $3 --input-len 1024 --output-len 32 >$W/s_$1.txt 2>$W/s_$1.log
  printf '%-24s rc=%s %4ss %s\n' "$1" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$1.txt)" >>$S
}
for r in 1 2; do
  stepm main_r$r lathe_main 1,8,16
  stepm branch_r$r lathe 8,16
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
