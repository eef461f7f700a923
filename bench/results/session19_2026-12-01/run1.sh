# Session 19, call 1: (a) main a91cc39's gpu_cuda_op_test and gpu_attention (not run on the GPU in
# session 18); (b) the price of the decode GEMV's split-K sum inside the real step: the diagnostic
# build (branch diag/skip-flush) with LATHE_DIAG_SKIP_FLUSH=1 (split CTAs store their partial as
# the output: wrong logits, same weight bytes) against the same binary without it, two rounds.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
echo "bundle: $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
for t in gpu_cuda_op_test gpu_attention; do
  timeout 300 $b/bin/$t >$W/$t.log 2>&1; echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $W/$t.log | tr '\n' ' ')" >>$S
done
step() {  # tag, model, batches, env...
  local tag=$1 model=$2 batches=$3; shift 3
  env "$@" timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda --batch-sizes $batches \
    --input-len 1024 --output-len 32 --out $W/s_$tag.json >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-22s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  step 8fp8_r$r Qwen3-8B-FP8 1,4,16
  step 8fp8_noflush_r$r Qwen3-8B-FP8 1,4,16 LATHE_DIAG_SKIP_FLUSH=1
done
step 8bf16 Qwen3-8B 1,16
step 8bf16_noflush Qwen3-8B 1,16 LATHE_DIAG_SKIP_FLUSH=1
step 32fp8 Qwen3-32B-FP8 1,16
step 32fp8_noflush Qwen3-32B-FP8 1,16 LATHE_DIAG_SKIP_FLUSH=1
tar czf $OUT/work.tgz -C $W .
cat $S
