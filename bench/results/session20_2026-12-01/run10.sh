# Session 20, call 10 (variant 22 back to its static dealing, 0a74518's kernel): what the 32B-FP8
# batch-16 regression under 22 interacts with. Steps at batch 16 under 14 and 22, each with the
# GEMV's early weight reads on (default) and off, and with the attention's early K/V copies off.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/steps.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
step() {  # tag, variant, extra env
  env LATHE_ATTN_SPLITK_KERNEL=$2 ${3:-} timeout 120 $b/bin/lathe bench latency configs/Qwen3-32B-FP8 --load-format dummy \
    --device cuda --batch-sizes 16 --input-len 1024 --output-len 32 --out $W/s_$1.json >$W/s_$1.txt 2>$W/s_$1.log
  printf '%-16s rc=%s %s\n' "$1" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$1.txt)" >>$S
}
step k14 14; step k22 22
step k14_gemv_eoff 14 LATHE_GEMV_EARLY_WEIGHTS=off; step k22_gemv_eoff 22 LATHE_GEMV_EARLY_WEIGHTS=off
step k14_kv_eoff 14 LATHE_ATTN_EARLY_KV=off; step k22_kv_eoff 22 LATHE_ATTN_EARLY_KV=off
cat $S
