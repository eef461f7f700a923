# Session 19, call 5 (branch wip/gemv-acqrel-arrival): the decode GEMV's split-K arrival as one
# acq_rel atomic (no fence.sc). gpu_cuda_gemv_test and gpu_golden_qwen3 on it, then decode steps
# of main's binary (a91cc39, lathe_main) and the new one alternated in the same call.
set -uo pipefail
GOLDEN_TIMEOUT=300 bash scripts/device-perf.sh --steps "golden"
b=$PWD/perf-bundle
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/steps.txt; W=/tmp/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT); main = lathe_main (a91cc39)" >$S
step() {  # tag, binary, model, batches
  local tag=$1 bin=$2 model=$3 batches=$4
  timeout 120 $b/bin/$bin bench latency configs/$model --load-format dummy --device cuda --batch-sizes $batches \
    --input-len 1024 --output-len 32 --out $W/s_$tag.json >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-18s rc=%s %s\n' "$tag" "$?" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  step 8fp8_main_r$r lathe_main Qwen3-8B-FP8 1,4,16
  step 8fp8_new_r$r lathe Qwen3-8B-FP8 1,4,16
done
step 8bf16_main lathe_main Qwen3-8B 1,4,16
step 8bf16_new lathe Qwen3-8B 1,4,16
step 32fp8_main lathe_main Qwen3-32B-FP8 1,4,16
step 32fp8_new lathe Qwen3-32B-FP8 1,4,16
tar czf $OUT/work.tgz -C $W .
cat $S
