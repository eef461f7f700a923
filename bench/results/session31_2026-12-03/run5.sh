# Session 31, call 5 (s31e-bundle: the final sources' lathe): the batch-1 step as a single-sequence
# serve runs it. `lathe bench latency` sizes the split-K attention geometry for the widest batch it
# measures (variant 22 for 1,2,4,16; 21 when it measures batch 1 alone), so the batch-1 figures in
# docs/PERFORMANCE.md are a batched serve's. Qwen3-8B-FP8 and Qwen3-8B BF16, batch 1 alone against
# batch 1 of the 1,2,4,16 run, alternated, three rounds.
#   scripts/device-bundle.sh --build build --bundle s31e-bundle --xz --targets "lathe"
set -uo pipefail
b=$PWD/s31e-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
step() {  # tag, model, batches
  local tag=$1 model=$2 batches=$3
  timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-20s rc=%s %4ss %s  %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" \
    "$(grep -ho 'kernel variant [0-9]* (widest decode batch [0-9]*)' $W/s_$tag.log | head -1)" >>$S
}
for r in 1 2 3; do
  step fp8-alone_r$r Qwen3-8B-FP8 1
  step fp8-list_r$r Qwen3-8B-FP8 1,2,4,16
  step bf16-alone_r$r Qwen3-8B 1
  step bf16-list_r$r Qwen3-8B 1,2,4,16
done
python3 - $W <<'PY' >>$S
import sys, glob, collections, re, os
w = sys.argv[1]
t = collections.defaultdict(list)
for f in glob.glob(f"{w}/s_*.txt"):
    m = re.match(r"s_(.+)_r\d\.txt", os.path.basename(f))
    for line in open(f):
        x = line.split()
        if len(x) > 8 and x[0] == "1":
            t[m.group(1)].append(float(x[3]))
med = lambda l: sorted(l)[len(l) // 2]
for d in ("fp8", "bf16"):
    a, l = med(t[d + "-alone"]), med(t[d + "-list"])
    print("%-5s batch 1: alone (variant 21) %.3f ms, in the 1,2,4,16 run (variant 22) %.3f ms, alone / list %.4f" % (d, a, l, a / l))
PY
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
