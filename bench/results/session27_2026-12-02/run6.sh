# Session 27, call 6 (perf-bundle 5ce09de, the final sources): with the QK-norm/RoPE kernel gone
# from the batch-1 chain, attention's split kernel follows the q|k|v GEMV directly, so the levers
# that decide what the chained kernels read before their wait were re-measured: the default against
# LATHE_ATTN_EARLY_KV=off, LATHE_GEMV_EARLY_WEIGHTS=off / 4, LATHE_FFN_FUSED_NORM=4, on the
# Qwen3-8B-FP8 step at batch 1 / 4, alternated, three rounds. All are byte-neutral (tested).
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" >/dev/null 2>&1 || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
W=$OUT/work; mkdir -p $W
step() {  # tag, env...
  local tag=$1; shift
  env "$@" timeout 100 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy \
    --device cuda --batch-sizes 1,4 --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-22s rc=%s %s\n' "$tag" "$?" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)"
}
for r in 1 2 3; do
  step default_r$r
  step earlykv_off_r$r LATHE_ATTN_EARLY_KV=off
  step weights_off_r$r LATHE_GEMV_EARLY_WEIGHTS=off
  step weights_4_r$r LATHE_GEMV_EARLY_WEIGHTS=4
  step fusednorm4_r$r LATHE_FFN_FUSED_NORM=4
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
