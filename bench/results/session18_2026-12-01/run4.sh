# Session 18, call 4: call 3 again after the fix that makes an "auto:eoff" override take effect
# (calls 1 and 3 measured the default in every per-shape row). Early weight reads on in ONE weight
# shape at a time at Qwen3-32B BF16 batch 4, and in none (the lever's control: should equal
# LATHE_GEMV_EARLY_WEIGHTS=off, 19.5-19.6 ms in calls 1-2); then early reads off in one shape only.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e $f ]] && gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
echo "main $(cat $b/COMMIT)" >$S
step() {  # tag, model, batches, env...
  local tag=$1 model=$2 batches=$3; shift 3
  env "$@" timeout 100 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda --batch-sizes $batches \
    --input-len 1024 --output-len 16 --out $W/s_$tag.json >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-22s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (avg %s)  ", $1, $4, $5}' $W/s_$tag.txt)" >>$S
}
qkv=bf16/10240x5120; o=bf16/5120x8192; gu=bf16/51200x5120; dn=bf16/5120x25600; lm=bf16/151936x5120
only() {  # tag shape: early reads on for that shape only
  local list=""
  for s in $qkv $o $gu $dn $lm; do [[ $s == $2 ]] || list+="$s=auto:eoff,"; done
  step "$1" Qwen3-32B 4 LATHE_GEMV_SHAPE_VARIANTS="$list"
}
only 32bf16_only_qkv $qkv
only 32bf16_only_o $o
only 32bf16_only_gateup $gu
only 32bf16_only_down $dn
only 32bf16_only_lmhead $lm
only 32bf16_none x
for pair in qkv:$qkv o:$o gateup:$gu down:$dn lmhead:$lm; do
  step 32bf16_off_${pair%%:*} Qwen3-32B 4 LATHE_GEMV_SHAPE_VARIANTS="${pair#*:}=auto:eoff"
done
tar czf $OUT/work.tgz -C $W .
cat $S
