# Session 22, call 1: does an early release of the next chained grid stall the chained steps
# beyond variant 22? main's lathe (perf-bundle/bin/lathe) against the same tree built with
# -DLATHE_DIAG_NO_EARLY_RELEASE (perf-bundle/bin/lathe_norel; branch wip/no-early-release: no
# kernel releases early, so every chained grid launches as the one before exits), and main's
# lathe with chained launches off (LATHE_CHAINED_LAUNCH=off). Steps alternated per cell; median
# step ms; each process measures its own read ceiling for the floor.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
chmod +x $b/bin/*  # gunzip keeps the .gz mode
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/steps.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem,driver_version --format=csv,noheader >>$S
t0=$SECONDS
step() {  # tag, binary, extra env (or -), model, batches
  local tag=$1 bin=$2 envs=$3 model=$4 batches=$5
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 110 $b/bin/$bin bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-30s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
# round 1: every arm
for model in Qwen3-32B Qwen3-32B-FP8; do
  bs=16; [[ $model == Qwen3-32B-FP8 ]] && bs=4,16
  for v in 14 22; do
    step ${model}_main_k$v lathe LATHE_ATTN_SPLITK_KERNEL=$v $model $bs
    step ${model}_norel_k$v lathe_norel LATHE_ATTN_SPLITK_KERNEL=$v $model $bs
  done
  [[ -n "${CHAINOFF:-}" ]] && step ${model}_main_k22_chainoff lathe LATHE_CHAINED_LAUNCH=off $model $bs
done
step Qwen3-8B-FP8_main lathe - Qwen3-8B-FP8 1,4,16
step Qwen3-8B-FP8_norel lathe_norel - Qwen3-8B-FP8 1,4,16
# round 2 where time is left: the default geometry, main against no-early-release
for model in Qwen3-32B-FP8 Qwen3-8B-FP8 Qwen3-32B; do
  (( SECONDS - t0 > 360 )) && break
  bs=1,4,16; [[ $model == Qwen3-32B ]] && bs=16
  step ${model}_main_r2 lathe - $model $bs
  step ${model}_norel_r2 lathe_norel - $model $bs
done
head -c 3000 $W/s_Qwen3-32B_main_k14.txt > $OUT/example_output.txt
# Nsight Compute on the FP8 8B gate|up GEMV (24576 x 4096) at m = 16 and m = 1 (main's default
# `auto`: three CTAs per SM, K split 2), to see why the 16-row tier takes 1.37x the 1-row time.
for m in 16 1; do
  (( SECONDS - t0 > 530 )) && break
  timeout $((590 - (SECONDS - t0))) ncu --clock-control none -k regex:gemv_kernel -s 3 -c 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats \
    --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    $b/bin/lathe_bench_kernels --variants --variant-list auto --no-peers --shapes decode --only gate_up \
    --widths $m --dtype fp8 >$OUT/ncu_gate_up_m$m.txt 2>&1
  echo "ncu m=$m rc=$? $((SECONDS - t0))s" >>$S
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
