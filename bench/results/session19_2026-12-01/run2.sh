# Session 19, call 2 (branch gemv-parts): K parts summed inside the CTA (ring:p4 / ring:p8).
# (a) gpu_cuda_gemv_test as the default (the kernel's refactor) and under ring:p8 for both dtypes
#     (every tier's rows byte-equal to m = 1, float64 references, every scale kind);
# (b) decode steps: the default against every decode-layer shape overridden to p8 / p4
#     (LATHE_GEMV_SHAPE_VARIANTS), two rounds on Qwen3-8B-FP8, one on Qwen3-32B-FP8 and 8B BF16;
# (c) the kernel table of the decode shapes, auto against the K-parts variants (back to back).
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
echo "bundle: $(cat $b/COMMIT)" >$S
t0=$SECONDS
gemv_tests() {  # tag, env...
  local tag=$1; shift
  for i in 0 1 2 3; do
    env "$@" GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 300 $b/bin/gpu_cuda_gemv_test >$W/gemv_$tag.$i.log 2>&1 &
  done
  wait
  echo "gpu_cuda_gemv_test $tag: passed $(cat $W/gemv_$tag.*.log | grep -c '^\[       OK') failed $(cat $W/gemv_$tag.*.log | grep -c '^\[  FAILED  \].*(') $((SECONDS - t0))s" >>$S
  grep -h '^\[  FAILED  \].*(' $W/gemv_$tag.*.log | head -5 >>$S
}
gemv_tests default
gemv_tests p8 LATHE_GEMV_TEST_VARIANT_FP8=ring:p8 LATHE_GEMV_TEST_VARIANT_BF16=ring:p8 --gtest_filter='*EveryRowOfEveryTier*:*MatchesFloat64*'
step() {  # tag, model, batches, env...
  local tag=$1 model=$2 batches=$3; shift 3
  env "$@" timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda --batch-sizes $batches \
    --input-len 1024 --output-len 32 --out $W/s_$tag.json >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-18s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
over() {  # dtype, variant, shapes...
  local d=$1 v=$2; shift 2; local out=""
  for s in "$@"; do out+="${out:+,}$d/$s=$v"; done; echo "$out"
}
S8="6144x4096 4096x4096 24576x4096 4096x12288"
S32="10240x5120 5120x8192 51200x5120 5120x25600"
for r in 1 2; do
  step 8fp8_r$r Qwen3-8B-FP8 1,4,16
  step 8fp8_p8_r$r Qwen3-8B-FP8 1,4,16 LATHE_GEMV_SHAPE_VARIANTS=$(over fp8 ring:p8 $S8)
  step 8fp8_p4_r$r Qwen3-8B-FP8 1,4,16 LATHE_GEMV_SHAPE_VARIANTS=$(over fp8 ring:p4 $S8)
done
echo "steps 8B-FP8 done $((SECONDS - t0))s" >>$S
step 32fp8 Qwen3-32B-FP8 1,16
step 32fp8_p8 Qwen3-32B-FP8 1,16 LATHE_GEMV_SHAPE_VARIANTS=$(over fp8 ring:p8 $S32)
step 32fp8_p4 Qwen3-32B-FP8 1,16 LATHE_GEMV_SHAPE_VARIANTS=$(over fp8 ring:p4 $S32)
step 8bf16 Qwen3-8B 1,16
step 8bf16_p8 Qwen3-8B 1,16 LATHE_GEMV_SHAPE_VARIANTS=$(over bf16 ring:p8 $S8)
echo "steps done $((SECONDS - t0))s" >>$S
timeout 100 $b/bin/lathe_bench_kernels --variants --shapes decode --dtype fp8 --no-peers --widths 1,4,16 \
  --variant-list "auto,ring:p4,ring:p8,ring:s4:p4" --out $W/kern_fp8 >$W/kern_fp8.txt 2>&1
echo "kernels fp8 rc=$? $((SECONDS - t0))s" >>$S
tar czf $OUT/work.tgz -C $W .
cat $S
