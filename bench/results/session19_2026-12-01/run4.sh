# Session 19, call 4 (main a91cc39, unchanged this session): the two GPU suites session 18 left
# unrun or incomplete: gpu_attention (sharded; call 1 timed out unsharded at 300 s after 105 OK)
# and gpu_batch_invariance.
set -uo pipefail
GOLDEN_TIMEOUT=400 bash scripts/device-perf.sh --steps "golden"
cat $OUT/device-perf-summary.txt 2>/dev/null || cat $OUT/summary.txt
