# Session 21, call 1: where variant 22 releases its dependents (LATHE_DIAG_PERSIST_RELEASE: 0 at
# every CTA's start, as in session 20; 1 when a CTA starts its last unit; 2 never, i.e. as CTAs
# exit). Qwen3-32B-FP8 batch 16 (22 was 19% slower there, chained) and Qwen3-8B-FP8 batch 4/16/64
# under 14 and 22 x {0,1,2}; then 22's byte tests under releases 1 and 2.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/steps.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
step() {  # tag, model, variant, batches, release
  local tag=$1
  env LATHE_ATTN_SPLITK_KERNEL=$3 LATHE_DIAG_PERSIST_RELEASE=$5 timeout 150 $b/bin/lathe bench latency configs/$2 \
    --load-format dummy --device cuda --batch-sizes $4 --input-len 1024 --output-len 32 --out $W/s_$tag.json \
    >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-18s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  step 32b_k14_r$r Qwen3-32B-FP8 14 16 0
  for rel in 0 1 2; do step 32b_k22_rel${rel}_r$r Qwen3-32B-FP8 22 16 $rel; done
done
for r in 1 2; do
  step 8b_k14_r$r Qwen3-8B-FP8 14 4,16,64 0
  for rel in 0 1 2; do step 8b_k22_rel${rel}_r$r Qwen3-8B-FP8 22 4,16,64 $rel; done
done
for rel in 1 2; do
  LATHE_DIAG_PERSIST_RELEASE=$rel timeout 200 $b/bin/gpu_attention \
    --gtest_filter='*PipelineDepth*:*CoBatch*' >$W/t_rel$rel.log 2>&1
  echo "tests rel=$rel rc=$? $(grep -E '^\[  (PASSED|FAILED)' $W/t_rel$rel.log | tr '\n' ' ')" >>$S
done
cat $S
