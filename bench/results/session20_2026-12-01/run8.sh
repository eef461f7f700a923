# Session 20, call 8: Qwen3-32B-FP8 at batch 16 under 14 and 22 again (call 7 had 22 19% slower
# there, one round), two rounds alternated, then both with chained launches off.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/steps.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
step() {  # tag, variant, batches, extra env
  local tag=$1 v=$2 batches=$3
  env LATHE_ATTN_SPLITK_KERNEL=$v ${4:-} timeout 150 $b/bin/lathe bench latency configs/Qwen3-32B-FP8 --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 --out $W/s_$tag.json >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-16s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do step k14_r$r 14 16,32; step k22_r$r 22 16,32; done
step k14_nochain 14 16 LATHE_CHAINED_LAUNCH=off
step k22_nochain 22 16 LATHE_CHAINED_LAUNCH=off
cat $S
