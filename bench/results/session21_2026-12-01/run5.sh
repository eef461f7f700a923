# Session 21, call 5 (main's final code): the new wide default (22) against 14 on the BF16-weight
# models, which calls 1-3 did not run: Qwen3-8B batch 4/16/64 and Qwen3-32B batch 16.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/steps.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT); k14 = LATHE_ATTN_SPLITK_KERNEL=14, k22 = the default" >$S
step() {  # tag, variant (empty: default), model, batches
  local tag=$1 v=$2 model=$3 batches=$4
  env ${v:+LATHE_ATTN_SPLITK_KERNEL=$v} timeout 100 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-16s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
step 8bf16_k14 14 Qwen3-8B 4,16,64; step 8bf16_k22 "" Qwen3-8B 4,16,64
step 32bf16_k14 14 Qwen3-32B 16; step 32bf16_k22 "" Qwen3-32B 16
cat $S
