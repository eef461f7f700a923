# Session 18, call 1: which GEMV's early weight reads make the Qwen3-32B BF16 batch-4 step slow
# (26.2 ms against 18.3 at batch 1, 19.6 with LATHE_GEMV_EARLY_WEIGHTS=off; session 17). Each
# weight shape's early reads are switched off alone through LATHE_GEMV_SHAPE_VARIANTS ("auto:eoff"),
# then the same control on the other models at batch 4.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e $f ]] && gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.limit --format=csv,noheader | tee $S
echo "main $(cat $b/COMMIT)" >>$S
step() {  # tag, model, batches, env...
  local tag=$1 model=$2 batches=$3; shift 3
  env "$@" timeout 100 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda --batch-sizes $batches \
    --input-len 1024 --output-len 16 --out $W/s_$tag.json >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-22s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (avg %s)  ", $1, $4, $5}' $W/s_$tag.txt)" >>$S
  grep -i "overridden per shape\|does not parse" $W/s_$tag.log | head -3 >>$S
}
step 32bf16_default Qwen3-32B 1,2,3,4
step 32bf16_qkv_eoff Qwen3-32B 4 LATHE_GEMV_SHAPE_VARIANTS=bf16/10240x5120=auto:eoff
step 32bf16_o_eoff Qwen3-32B 4 LATHE_GEMV_SHAPE_VARIANTS=bf16/5120x8192=auto:eoff
step 32bf16_gateup_eoff Qwen3-32B 4 LATHE_GEMV_SHAPE_VARIANTS=bf16/51200x5120=auto:eoff
step 32bf16_down_eoff Qwen3-32B 4 LATHE_GEMV_SHAPE_VARIANTS=bf16/5120x25600=auto:eoff
step 32bf16_lmhead_eoff Qwen3-32B 4 LATHE_GEMV_SHAPE_VARIANTS=bf16/151936x5120=auto:eoff
step 32bf16_all_off Qwen3-32B 4 LATHE_GEMV_EARLY_WEIGHTS=off
step 32fp8_default Qwen3-32B-FP8 1,4
step 32fp8_all_off Qwen3-32B-FP8 1,4 LATHE_GEMV_EARLY_WEIGHTS=off
step 8bf16_default Qwen3-8B 1,4
step 8bf16_all_off Qwen3-8B 1,4 LATHE_GEMV_EARLY_WEIGHTS=off
tar czf $OUT/work.tgz -C $W .
cat $S
