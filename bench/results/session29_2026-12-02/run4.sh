# Session 29, call 4 (perf-bundle, the split slots in tiers 1 and 4): gpu_golden_qwen3 (every tiny
# fixture's CUDA logits against the f32 HF reference, greedy continuations, decode bytes alone and
# co-batched, graph replays) and the served determinism check (a request alone = beside 31 others =
# on a second server that preempts, greedy and seeded).
#   scripts/device-bundle.sh --build build --bundle perf-bundle --xz --with-tokenizer \
#     --targets "lathe gpu_golden_qwen3"
set -uo pipefail
GOLDEN_TIMEOUT=420 scripts/device-perf.sh --steps "golden determinism" >$OUT/device_perf.txt 2>&1
echo "device-perf rc=$?"
grep -E "bundle commit|golden|determinism|PASS|FAIL|passed|preempt|IDENTICAL|DIFFER" $OUT/device-perf-summary.txt | head -30
