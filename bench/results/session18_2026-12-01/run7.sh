# Session 18, call 7 (main's final code: early reads off only in the 4-row tier after attention):
# the golden and batch-invariance suites, and the steps the rule touches.
set -uo pipefail
GOLDEN_TIMEOUT=300 bash scripts/device-perf.sh --steps "golden"
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/steps.txt; W=/tmp/work; mkdir -p $W
echo "main $(cat $b/COMMIT)" >$S
step() {  # tag, model, batches, env...
  local tag=$1 model=$2 batches=$3; shift 3
  env "$@" timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda --batch-sizes $batches \
    --input-len 1024 --output-len 32 --out $W/s_$tag.json >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-18s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (avg %s)  ", $1, $4, $5}' $W/s_$tag.txt)" >>$S
}
step 8fp8 Qwen3-8B-FP8 1,4,16
step 8bf16 Qwen3-8B 1,4,16
step 32bf16 Qwen3-32B 1,4
step 32fp8 Qwen3-32B-FP8 4
tar czf $OUT/work.tgz -C $W .
cat $OUT/summary.txt $S
