# Session 26, call 2 (s26b-bundle, a diagnostic build of the SwiGLU epilogue: 266bc30 plus
# LATHE_DIAG_SILU_LATE_RELEASE, which makes the epilogue's launches release the next kernel after
# their main loop instead of at their start). Why is batch 1 slower with the epilogue (call 1)?
# Qwen3-8B-FP8 batch 1/4/16, two rounds, alternated: main 63b167f's `lathe` (base); this one with
# the epilogue; without it (LATHE_FFN_FUSED_SILU=off); with it and the late release; with it and
# no early weight reads in the down projection (a per-shape override, `auto:eoff`). Then
# Qwen3-32B-FP8 (its gate|up takes the balanced grid: no epilogue) base vs this, batch 1/4.
#   scripts/device-bundle.sh --build build --bundle s26b-bundle --xz \
#     --targets "lathe" --add lathe_base=/tmp/wt_base/build/lathe
set -uo pipefail
b=$PWD/s26b-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
t0=$SECONDS
step() {  # tag, binary, model, batches, env...
  local tag=$1 bin=$2 model=$3 batches=$4; shift 4
  env "$@" timeout 150 $b/bin/$bin bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-24s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  step 8B-FP8_base_r$r lathe_base Qwen3-8B-FP8 1,4,16
  step 8B-FP8_silu_r$r lathe Qwen3-8B-FP8 1,4,16
  step 8B-FP8_off_r$r lathe Qwen3-8B-FP8 1,4,16 LATHE_FFN_FUSED_SILU=off
  step 8B-FP8_late_r$r lathe Qwen3-8B-FP8 1,4,16 LATHE_DIAG_SILU_LATE_RELEASE=1
  step 8B-FP8_eoff_r$r lathe Qwen3-8B-FP8 1,4,16 LATHE_GEMV_SHAPE_VARIANTS=fp8/4096x12288=auto:eoff
  step 8B-FP8_offeoff_r$r lathe Qwen3-8B-FP8 1,4,16 LATHE_FFN_FUSED_SILU=off LATHE_GEMV_SHAPE_VARIANTS=fp8/4096x12288=auto:eoff
done
step 32B-FP8_base lathe_base Qwen3-32B-FP8 1,4
step 32B-FP8_silu lathe Qwen3-32B-FP8 1,4
grep -h "shape variant\|SHAPE_VARIANTS\|4096x12288" $W/s_8B-FP8_eoff_r1.log | head -3 >>$S
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
