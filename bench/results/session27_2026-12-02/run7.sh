# Session 27, call 7 (perf-bundle 5ce09de, the final sources): more weight requested before the
# chained-launch wait for single shapes, where the kernel before is latency-bound (per-shape
# early reads, LATHE_GEMV_SHAPE_VARIANTS=<shape>=auto:e<N>: auto's kernel, so the same bytes, with
# N more steps per CTA prefetched into L2): the o projection (4096x4096, after the attention
# reduce) with e2 / e4, gate|up (24576x4096, after the o projection) with e2; Qwen3-8B-FP8 batch 1
# and 4, against the default, alternated, three rounds.
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" >/dev/null 2>&1 || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
W=$OUT/work; mkdir -p $W
step() {  # tag, env...
  local tag=$1; shift
  env "$@" timeout 100 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy \
    --device cuda --batch-sizes 1,4 --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-18s rc=%s %s\n' "$tag" "$?" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)"
}
for r in 1 2 3; do
  step default_r$r
  step o_e2_r$r LATHE_GEMV_SHAPE_VARIANTS=fp8/4096x4096=auto:e2
  step o_e4_r$r LATHE_GEMV_SHAPE_VARIANTS=fp8/4096x4096=auto:e4
  step gateup_e2_r$r LATHE_GEMV_SHAPE_VARIANTS=fp8/24576x4096=auto:e2
done
grep -h "overridden per shape" $W/s_o_e2_r1.log | head -1
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
