# Session 22, call 2: which kernels' early release of the next chained grid costs or gains?
# perf-bundle/bin/lathe_diag is branch wip/no-early-release with a runtime switch: bit f of
# LATHE_DIAG_RELEASE_MASK lets family f release early (0 GEMV, 1 elementwise: norms, SwiGLU,
# embedding; 2 QK-norm/RoPE/KV write; 3 split-K attention incl. the persistent grid; 4 the split-K
# reduce; 5 non-split decode attention); 0x3f = main's behaviour, 0 = no early release anywhere.
# perf-bundle/bin/lathe is main (bee9a1b build = f9d11b3 code), for a parity check of 0x3f.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/steps.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
t0=$SECONDS
step() {  # tag, binary, extra env (or -), model, batches
  local tag=$1 bin=$2 envs=$3 model=$4 batches=$5
  [[ "$envs" == - ]] && envs=""
  env $envs timeout 110 $b/bin/$bin bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-34s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
step 8fp8_main lathe - Qwen3-8B-FP8 1,4,16
for mask in 0x3f 0x0 0x3e 0x3d 0x3b 0x37 0x2f; do
  step 8fp8_mask$mask lathe_diag LATHE_DIAG_RELEASE_MASK=$mask Qwen3-8B-FP8 1,4,16
done
step 32fp8_main lathe - Qwen3-32B-FP8 1,4,16
for mask in 0x3f 0x0 0x3e 0x3d 0x3b 0x37 0x2f; do
  step 32fp8_mask$mask lathe_diag LATHE_DIAG_RELEASE_MASK=$mask Qwen3-32B-FP8 1,4,16
done
for mask in 0x3f 0x0 0x3e 0x37 0x2f 0x3d; do
  (( SECONDS - t0 > 520 )) && break
  step 32bf16_k14_mask$mask lathe_diag "LATHE_ATTN_SPLITK_KERNEL=14 LATHE_DIAG_RELEASE_MASK=$mask" Qwen3-32B 16
done
grep -h "DIAG release mask" $W/s_*.log | sort | uniq -c > $OUT/mask_lines.txt
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
