#!/usr/bin/env bash
# Session 52, call 2 (bundle p52w-bundle = branch wip/gemv-x-whole): a register-ring segment of at
# most two x groups stages both up front and waits once, with no CTA barrier pair between them
# (LATHE_DIAG_GEMV_X_WHOLE=0 restores main's staging in the same binary). Its GEMV suites; `auto`
# by kernel on the Qwen3-8B / 32B fp8 shapes at 1-32 rows, on and off alternated (two rounds);
# decode steps on and off (Qwen3-8B-FP8, Qwen3-32B-FP8, Qwen3-8B, batch 1-32, two rounds); then one
# Nsight Compute profile of the 16-row tier on 8B q|o with its per-instruction stall samples.
#   scripts/device-bundle.sh -j 2 --bundle p52w-bundle --targets "lathe gpu_cuda_gemv_test gpu_cuda_op_test gpu_golden_qwen3 gpu_batch_invariance lathe_bench_kernels" --xz
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p52w-bundle}"
decode_suites
gpu_suite gemv_sa gpu_cuda_gemv_test LATHE_GEMV_TEST_VARIANT_FP8=auto:sa LATHE_GEMV_TEST_VARIANT_BF16=auto:sa \
  GTEST_FILTER='*EveryRowOfEveryTier*:*SharedSplitSum*'
for r in 1 2; do
  for model in qwen3-8b qwen3-32b; do
    auto_rows whole_r$r $model 1,4,8,16,32
    auto_rows off_r$r $model 1,4,8,16,32 LATHE_DIAG_GEMV_X_WHOLE=0
  done
done
export BATCHES=1,4,8,16,32
for r in 1 2; do
  for model in Qwen3-8B-FP8 Qwen3-32B-FP8 Qwen3-8B; do
    step_arm ${model}_whole_r$r $model ""
    (export LATHE_DIAG_GEMV_X_WHOLE=0; step_arm ${model}_off_r$r $model "")
  done
done
if (( SECONDS - t0 < 480 )); then
  timeout 60 ncu --clock-control none --set full --import-source no -k regex:gemv_kernel -s 3 -c 1 -o $W/qo16 \
    $b/bin/lathe_bench_kernels --variants --variant-list auto --no-peers --only q/o --widths 16 --dtype fp8 \
    >$W/ncu_qo16.txt 2>&1
  echo "ncu q|o m=16 rc=$? $((SECONDS - t0))s" >>$S
  timeout 60 ncu --import $W/qo16.ncu-rep --page source --print-source sass --csv >$W/qo16_sass.csv 2>&1
  echo "ncu source rc=$? $(wc -l <$W/qo16_sass.csv) lines" >>$S
  python3 - "$W/qo16_sass.csv" >>$S 2>&1 <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
head = next((i for i, r in enumerate(rows) if any("Sampling" in c for c in r)), None)
if head is None:
    print("no sampling column"); sys.exit()
cols = rows[head]
src = next(i for i, c in enumerate(cols) if c.strip() == "Source")
samp = [i for i, c in enumerate(cols) if "Sampling" in c]
def num(v):
    try: return float(v.replace(",", ""))
    except ValueError: return 0.0
body = [r for r in rows[head + 1:] if len(r) == len(cols)]
total = sum(num(r[samp[0]]) for r in body) or 1
print("stall samples", cols[samp[0]], total)
for r in sorted(body, key=lambda r: -num(r[samp[0]]))[:30]:
    print(f"{100 * num(r[samp[0]]) / total:5.1f}% {r[src][:90]}")
PY
fi
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
