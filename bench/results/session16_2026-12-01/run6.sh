#!/usr/bin/env bash
# Session 16, call 6: fp8 weights with more than 264 row blocks on the 396-CTA balanced grid
# (`auto` -> ringbal:b3). gpu_cuda_gemv_test as the new default and as ringbal:b3; the gate|up
# shapes in context (--after-norm) and back to back, ringbal vs ringbal:b3; Qwen3-32B-FP8 decode
# steps, main's binary (old) vs this one (new), alternated.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz $b/old/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/* $b/old/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $S
echo "bundle $(cat $b/COMMIT) + the policy change (old: main 9fa9b84)" >>$S
for v in default ringbal:b3; do
  t=$SECONDS
  if [[ $v == default ]]; then timeout 200 $b/bin/gpu_cuda_gemv_test >$W/gemv_$v.log 2>&1
  else LATHE_GEMV_TEST_VARIANT_FP8=$v timeout 200 $b/bin/gpu_cuda_gemv_test >$W/gemv_b3.log 2>&1; fi
  echo "gpu_cuda_gemv_test fp8=$v rc=$? $((SECONDS-t))s $(grep -hE '^\[  (PASSED|FAILED)  \] [0-9]+ test' $W/gemv_*${v#ringbal:}.log | tr '\n' ' ')" >>$S
done
for mode in context back; do
  flags="--variants --variant-list ringbal,ringbal:b3 --no-peers --only gate_up --widths 1,4,16 --dtype fp8"
  [[ $mode == context ]] && flags="$flags --after-norm"
  timeout 150 $b/bin/lathe_bench_kernels $flags --out $W/kb_$mode >$W/kb_$mode.txt 2>&1
  echo "== lathe_bench_kernels $mode rc=$?" >>$S
  grep -E "gate_up|ceiling" $W/kb_$mode.txt | head -24 >>$S
done
for round in 1 2; do
  for who in old new; do
    bin=$b/bin/lathe; [[ $who == old ]] && bin=$b/old/lathe
    timeout 120 $bin bench latency configs/Qwen3-32B-FP8 --load-format dummy --device cuda --batch-sizes 1,4,16 \
      --input-len 1024 --output-len 32 >$W/32b_${who}_r$round.txt 2>$W/32b_${who}_r$round.log
    printf '%-16s rc=%s %s\n' "32b_${who}_r$round" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/32b_${who}_r$round.txt)" >>$S
  done
done
tar czf $OUT/work.tgz -C $W .
cat $S
