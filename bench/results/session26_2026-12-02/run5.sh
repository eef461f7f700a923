# Session 26, call 5 (perf-bundle, the final code): gpu_golden_qwen3 and the served determinism
# check (scripts/device-perf.sh: a request alone, at batch 1 the fused paths, against beside 31
# others, and on a second server that preempts).
#   scripts/device-bundle.sh --build build --bundle perf-bundle --xz --with-tokenizer \
#     --targets "lathe gpu_golden_qwen3"
set -uo pipefail
GOLDEN_TIMEOUT=420 scripts/device-perf.sh --steps "golden determinism" >$OUT/device_perf.txt 2>&1
echo "device-perf rc=$?"
# As run, the last line grepped $OUT/summary.txt, which device-perf.sh does not write (rc 2, no
# output); its summary is $OUT/device-perf-summary.txt, kept in call5/:
grep -E "bundle commit|golden|determinism|PASS|FAIL|passed|preempt|IDENTICAL|DIFFER" $OUT/device-perf-summary.txt | head -30
