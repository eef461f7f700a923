# Session 30, call 8 (perf-bundle, the final sources: main's GEMV kernels, sm_90a SASS identical to
# session 29's final 34bcd4c, whose served determinism had not run): the served determinism check
# (a request alone = beside 31 others = on a second server that preempts, greedy and seeded).
#   scripts/device-bundle.sh --build build --bundle perf-bundle --xz --with-tokenizer --targets "lathe"
set -uo pipefail
scripts/device-perf.sh --steps "determinism" >$OUT/device_perf.txt 2>&1
echo "device-perf rc=$?"
grep -E "bundle commit|determinism|PASS|FAIL|IDENTICAL|DIFFER|preempt" $OUT/device-perf-summary.txt | head -30
