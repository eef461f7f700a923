# Session 18, call 5 (main's final code): validation (GPU suites, served determinism, quick step),
# then A/B of the new rule (the o projection, the GEMV right after decode attention, reads no
# weights early) against the old behaviour, restored for the o shape by a per-shape override
# ("auto:e0": the ring's first steps before the wait, the old default), on the four models.
set -uo pipefail
GOLDEN_TIMEOUT=400 bash scripts/device-perf.sh --steps "golden determinism quick"
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/ab.txt; W=$OUT/ab; mkdir -p $W
echo "main $(cat $b/COMMIT)" >$S
step() {  # tag, model, env...
  local tag=$1 model=$2; shift 2
  env "$@" timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda --batch-sizes 1,4,16 \
    --input-len 1024 --output-len 16 --out $W/s_$tag.json >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-18s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (avg %s)  ", $1, $4, $5}' $W/s_$tag.txt)" >>$S
}
step 8fp8_new Qwen3-8B-FP8
step 8fp8_old Qwen3-8B-FP8 LATHE_GEMV_SHAPE_VARIANTS=fp8/4096x4096=auto:e0
step 32bf16_new Qwen3-32B
step 32bf16_old Qwen3-32B LATHE_GEMV_SHAPE_VARIANTS=bf16/5120x8192=auto:e0
step 32fp8_new Qwen3-32B-FP8
step 32fp8_old Qwen3-32B-FP8 LATHE_GEMV_SHAPE_VARIANTS=fp8/5120x8192=auto:e0
step 8bf16_new Qwen3-8B
step 8bf16_old Qwen3-8B LATHE_GEMV_SHAPE_VARIANTS=bf16/4096x4096=auto:e0
cat $OUT/summary.txt $S
