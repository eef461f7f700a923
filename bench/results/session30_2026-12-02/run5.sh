# Session 30, call 5 (s30e-bundle: lathe of this build and main's at dcedecb as lathe_main): decode
# steps of main's binary against this build's (the final sources: every split writes the slots of all 128 rows),
# alternated, same machine, three rounds: Qwen3-8B-FP8 at batch 1/2/4/8/16/32, Qwen3-8B BF16 at batch
# 1/16, Qwen3-32B-FP8 at batch 1/4/16; input 1024, output 32, dummy weights.
#   scripts/device-bundle.sh --build build --bundle s30e-bundle --xz --targets "lathe" \
#     --add lathe_main=/tmp/mainbin/lathe
set -uo pipefail
b=$PWD/s30e-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
step() {  # tag, binary, model, batches
  local tag=$1 bin=$2 model=$3 batches=$4
  timeout 150 $b/bin/$bin bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-24s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (%sx)  ", $1, $4, $10}' $W/s_$tag.txt)" >>$S
}
for r in 1 2 3; do
  step 8B-FP8_main_r$r lathe_main Qwen3-8B-FP8 1,2,4,8,16,32
  step 8B-FP8_new_r$r lathe Qwen3-8B-FP8 1,2,4,8,16,32
  step 8B-BF16_main_r$r lathe_main Qwen3-8B 1,16
  step 8B-BF16_new_r$r lathe Qwen3-8B 1,16
  (( SECONDS - t0 > 420 )) && continue
  step 32B-FP8_main_r$r lathe_main Qwen3-32B-FP8 1,4,16
  step 32B-FP8_new_r$r lathe Qwen3-32B-FP8 1,4,16
done
python3 - $W <<'PY' >>$S
import sys, glob, collections, re, os
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(f"{w}/s_*.txt"):
    m = re.match(r"s_(.+)_(main|new)_r\d\.txt", os.path.basename(f))
    for line in open(f):
        x = line.split()
        if len(x) > 8 and x[0].isdigit():
            t[(m.group(1), int(x[0]))][m.group(2)].append(float(x[3]))
print("model      batch  main ms (median of rounds)  new ms   new/main")
for (model, b), v in sorted(t.items()):
    med = lambda l: sorted(l)[len(l) // 2] if l else float("nan")
    print("%-10s %5d  %8.3f  %8.3f   %.4f" % (model, b, med(v["main"]), med(v["new"]), med(v["new"]) / med(v["main"])))
PY
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
