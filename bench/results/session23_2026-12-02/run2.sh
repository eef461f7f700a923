# Session 23, call 2: session 22's prepared script (branch wip/gemv16-xgroup, bench/results/session23_next/
# run_gemv16_group.sh there) on g16-bundle (the branch's lathe, gpu_cuda_gemv_test, lathe_bench_kernels;
# main 568e4b4's lathe as lathe_main), unpacked with scripts/bundle-unpack.sh. As prepared:
# Prepared in session 22 for the next session (branch wip/gemv16-xgroup, not for main as is):
# does the 16-row GEMV tier gain from staging 8 steps of x per shared-memory buffer instead of 4
# (half the CTA barrier pairs; session 22's Nsight Compute profile found that tier bound by its
# per-warp instruction stream)? The branch moves the register ring's x buffers to dynamic shared
# memory (ptxas: every existing instantiation keeps main's registers and no stack) and adds the
# 8-step instantiations of the non-balanced 16-row tier, chosen by LATHE_DIAG_GEMV16_GROUP=8.
# Bundle from this branch's build: scripts/device-bundle.sh --build build --bundle perf-bundle \
#   --targets "lathe gpu_cuda_gemv_test lathe_bench_kernels" --gzip; main's lathe as lathe_main.gz.
set -uo pipefail
b=$PWD/g16-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
t0=$SECONDS
# 1. Bit identity of every tier under the 8-step group (4 shards; the tier and float64 tests).
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
pids=()
for i in 0 1 2 3; do
  LATHE_DIAG_GEMV16_GROUP=8 GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 200 $b/bin/gpu_cuda_gemv_test \
    >$W/gemv_test.$i.log 2>&1 &
  pids+=($!)
done
rc=0; for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
cat $W/gemv_test.*.log >$OUT/gpu_cuda_gemv_test_group8.log
echo "gpu_cuda_gemv_test (group 8) rc=$rc $((SECONDS - t0))s passed $(grep -h '^\[  PASSED  \]' $W/gemv_test.*.log | awk '{n += $4} END {print n + 0}'), failed lines $(grep -c '^\[  FAILED  \]' $OUT/gpu_cuda_gemv_test_group8.log)" >>$S
# 2. In context (after the norm), 4 against 8 steps, alternated, two rounds; peers in round 1.
for r in 1 2; do
  for g in 4 8; do
    peers=--no-peers; [[ $r == 1 && $g == 4 ]] && peers=
    env LATHE_DIAG_GEMV16_GROUP=$g timeout 150 $b/bin/lathe_bench_kernels --after-norm --shapes decode \
      --widths 1,16 --dtype fp8 $peers >$W/kernels_g${g}_r$r.txt 2>&1
    echo "kernels group $g round $r rc=$? $((SECONDS - t0))s" >>$S
    grep -E " 16 (gemv_batch16|cublaslt)" $W/kernels_g${g}_r$r.txt >>$S
  done
done
# 3. Decode steps: main, the branch at 4 and at 8 steps.
step() {  # tag, binary, env (or -), model, batches
  local tag=$1 bin=$2 envs=$3 model=$4 batches=$5
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 100 $b/bin/$bin bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-30s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for model in Qwen3-8B-FP8 Qwen3-32B-FP8; do
  (( SECONDS - t0 > 480 )) && break
  step ${model}_main lathe_main - $model 8,16
  step ${model}_g4 lathe LATHE_DIAG_GEMV16_GROUP=4 $model 8,16
  step ${model}_g8 lathe LATHE_DIAG_GEMV16_GROUP=8 $model 8,16
done
# 4. Where a 16-row warp stalls, 4 against 8 steps (stall reasons per issued instruction).
for g in 4 8; do
  (( SECONDS - t0 > 540 )) && break
  LATHE_DIAG_GEMV16_GROUP=$g timeout 50 ncu --clock-control none -k regex:gemv_kernel -s 3 -c 1 \
    --section SpeedOfLight --section WarpStateStats \
    --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
    $b/bin/lathe_bench_kernels --variants --variant-list auto --no-peers --shapes decode --only gate_up \
    --widths 16 --dtype fp8 >$OUT/ncu_gate_up_m16_group$g.txt 2>&1
  echo "ncu group $g rc=$? $((SECONDS - t0))s" >>$S
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
