# Session 23, call 3 (wg-bundle, commit 1030e77): the 16-row GEMV tier as warpgroup MMAs (":wg").
# 1. gpu_cuda_gemv_test with every fp8 and bf16 case under auto:wg, then ringbal:b3:wg / ring:s2:wg
#    (rows byte-equal to m = 1, which stays on mma.sync; float64 bounds). 2. In-context kernel
#    A/B auto vs auto:wg at m = 8 and 16 with cuBLASLt / cuBLAS in the same process, two rounds.
# 3. Decode steps with the fp8 layer shapes and the lm_head on :wg (LATHE_GEMV_SHAPE_VARIANTS)
#    against the default, alternated, two rounds. 4. ncu stall reasons of 8B gate|up m = 16 under :wg.
set -uo pipefail
b=$PWD/wg-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)" >$S
t0=$SECONDS
$b/bin/lathe_probe_bf16_wgmma 4096 1024 | tail -1 >>$S
gemv_suite() {  # tag, fp8 variant, bf16 variant
  local tag=$1 pids=() rc=0 t=$SECONDS
  for i in 0 1 2 3; do
    LATHE_GEMV_TEST_VARIANT_FP8=$2 LATHE_GEMV_TEST_VARIANT_BF16=$3 GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i \
      timeout 200 $b/bin/gpu_cuda_gemv_test >$W/gemv_$tag.$i.log 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
  cat $W/gemv_$tag.*.log >$OUT/gpu_cuda_gemv_test_$tag.log
  printf '%-34s rc=%s %4ss passed %s, failed lines %s\n' "gpu_cuda_gemv_test $2 / $3" "$rc" "$((SECONDS - t))" \
    "$(grep -h '^\[  PASSED  \]' $W/gemv_$tag.*.log | awk '{n += $4} END {print n + 0}')" \
    "$(grep -c '^\[  FAILED  \]' $OUT/gpu_cuda_gemv_test_$tag.log)" >>$S
}
gemv_suite wg auto:wg auto:wg
gemv_suite wg_forced ringbal:b3:wg ring:s2:wg
gemv_suite default auto auto
for r in 1 2; do
  for dt in fp8 bf16; do
    peers=--no-peers; [[ $r == 1 ]] && peers=
    timeout 150 $b/bin/lathe_bench_kernels --variants --variant-list auto,auto:wg --after-norm --shapes decode \
      --widths 8,16 --dtype $dt $peers >$W/kernels_${dt}_r$r.txt 2>&1
    echo "kernels $dt round $r rc=$? $((SECONDS - t0))s" >>$S
    grep -E " (8|16) " $W/kernels_${dt}_r$r.txt | grep -vE "^#" >>$S
  done
done
wg="fp8/6144x4096=auto:wg,fp8/4096x4096=auto:wg,fp8/24576x4096=auto:wg,fp8/4096x12288=auto:wg"
wg="$wg,fp8/10240x5120=auto:wg,fp8/5120x8192=auto:wg,fp8/51200x5120=auto:wg,fp8/5120x25600=auto:wg"
wg="$wg,bf16/151936x4096=auto:wg,bf16/151936x5120=auto:wg"
wgbf="bf16/6144x4096=auto:wg,bf16/4096x4096=auto:wg,bf16/24576x4096=auto:wg,bf16/4096x12288=auto:wg,bf16/151936x4096=auto:wg"
step() {  # tag, env (or -), model, batches
  local tag=$1 envs=$2 model=$3 batches=$4
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 100 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-30s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  (( SECONDS - t0 > 480 )) && break
  step 8B-FP8_default_r$r - Qwen3-8B-FP8 8,16
  step 8B-FP8_wg_r$r LATHE_GEMV_SHAPE_VARIANTS=$wg Qwen3-8B-FP8 8,16
  step 32B-FP8_default_r$r - Qwen3-32B-FP8 8,16
  step 32B-FP8_wg_r$r LATHE_GEMV_SHAPE_VARIANTS=$wg Qwen3-32B-FP8 8,16
  step 8B_default_r$r - Qwen3-8B 16
  step 8B_wg_r$r LATHE_GEMV_SHAPE_VARIANTS=$wgbf Qwen3-8B 16
done
grep -h "gemv\|variant" $W/s_8B-FP8_wg_r1.log | head -5 >>$S
if (( SECONDS - t0 < 540 )); then
  timeout 40 ncu --clock-control none -k regex:gemv_kernel -s 3 -c 1 --section SpeedOfLight --section WarpStateStats \
    --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
    $b/bin/lathe_bench_kernels --variants --variant-list auto:wg --no-peers --shapes decode --only gate_up \
    --widths 16 --dtype fp8 >$OUT/ncu_gate_up_m16_wg.txt 2>&1
  echo "ncu rc=$? $((SECONDS - t0))s" >>$S
fi
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
