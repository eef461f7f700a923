#!/usr/bin/env bash
# Session 40, prepared (NOT RUN): what the one-pass 32-row tier (LATHE_FFN_BATCH32) is worth, on
# the bundle run1.sh used (BUNDLE=full-bundle), after run1.sh passed.
# (1) Kernels: every Qwen3 shape at 16, 17, 24 and 32 rows, the default route (two 16-row
#     launches above 16) beside `gemv_batch32` (one launch, where the shape's kernel builds it)
#     and cuBLASLt FP8 / cuBLAS BF16, with the read ceiling measured in the same process.
# (2) Qwen3-8B gate|up (auto: ring:b3, fp8 with wgmma, where the 32-row tier runs a one-step ring
#     to fit 80 registers and bf16 still spills): the same K split at a two-CTA register budget
#     (fp8 ring:k2:wg:wgn, bf16 ring:k2: no spills, but 384 CTAs in 264 slots), to see which costs more.
# (3) Decode steps, lever off vs on, alternated, two rounds: Qwen3-8B-FP8 and Qwen3-8B at batch
#     17, 24 and 32 (input 1024), and Qwen3-32B-FP8 at 24 and 32 (its gate|up on the balanced grid).
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-full-bundle}"
t0=$SECONDS
timeout 200 $b/bin/lathe_bench_kernels --only qwen3 --widths 16,17,24,32 >$W/kernels.txt 2>&1
echo "== kernels rc=$? $((SECONDS - t0))s" >>$S
grep -h "read ceiling" $W/kernels.txt >>$S
grep -hE "x2 halves|gemv_batch32|cublas" $W/kernels.txt | awk '$6 >= 17' | awk '{print $1, $2, $5, $6, $7, $8, $9, $NF}' >>$S
for dt in fp8 bf16; do
  list=auto,ring:k2:wg:wgn
  [[ $dt == bf16 ]] && list=auto,ring:k2
  timeout 120 $b/bin/lathe_bench_kernels --variants --variant-list $list --only qwen3-8b/gate --dtype $dt \
    --widths 24,32 --no-peers >$W/gate_b2_$dt.txt 2>&1
  echo "== 8B gate|up $dt: b3 vs b2 budget rc=$? $((SECONDS - t0))s" >>$S
  grep -h "batch32\| v:" $W/gate_b2_$dt.txt | awk '$6 >= 17' >>$S
done
step() {  # tag, model, batches, env...
  local tag=$1 model=$2 batches=$3
  shift 3
  env "$@" timeout 150 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda \
    --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-28s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  for m in Qwen3-8B-FP8 Qwen3-8B; do
    step off-$m-r$r $m 17,24,32 LATHE_NONE=1
    step on-$m-r$r $m 17,24,32 LATHE_FFN_BATCH32=on
  done
  step off-Qwen3-32B-FP8-r$r Qwen3-32B-FP8 24,32 LATHE_NONE=1
  step on-Qwen3-32B-FP8-r$r Qwen3-32B-FP8 24,32 LATHE_FFN_BATCH32=on
done
grep -h "linear route: decode m=" $W/s_on-Qwen3-8B-FP8-r1.log | sort -u | head -6 >>$S
python3 "$(dirname "$0")/step_ab_table.py" $W >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
