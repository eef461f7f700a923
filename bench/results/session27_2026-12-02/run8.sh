# Session 27, call 8 (s27c-bundle: branch wip/rope-tier4-release, the q|k|v epilogue's 4-row tier
# releasing split-K attention after its main loop; lathe_base = main 52c842f's lathe, releasing it
# at the tier's start): Qwen3-8B-FP8 batch 2 / 3 / 4 (the 4-row tier) and batch 1 (unchanged code
# path, a control), alternated, three rounds.
#   scripts/device-bundle.sh --build build --bundle s27c-bundle --xz --targets "lathe" \
#     --add lathe_base=<main 52c842f's lathe>
set -uo pipefail
b=$PWD/s27c-bundle
scripts/bundle-unpack.sh "$b" >/dev/null 2>&1 || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
W=$OUT/work; mkdir -p $W
step() {  # tag, binary
  local tag=$1 bin=$2
  timeout 100 $b/bin/$bin bench latency configs/Qwen3-8B-FP8 --load-format dummy \
    --device cuda --batch-sizes 1,2,3,4 --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-12s rc=%s %s\n' "$tag" "$?" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)"
}
for r in 1 2 3; do
  step base_r$r lathe_base
  step loop_r$r lathe
done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
