# Session 32, call 1 (s32a-bundle: this commit's lathe, main 8d3d785's as lathe_main): does the decode
# step overhead change (inputs through page-locked staging without a host wait before the graph
# replay, greedy argmax across CTAs) shorten the step? Qwen3-8B-FP8 at batch 1/4/16 and Qwen3-8B BF16
# at batch 1/16, main and new alternated, three rounds; then the new binary's --step-breakdown.
#   scripts/device-bundle.sh --build build --bundle s32a-bundle --xz --targets "lathe" --add lathe_main=<main's lathe>
set -uo pipefail
b=$PWD/s32a-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT); $(cat $b/ADDED)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
step() {  # tag, binary, model, batches, extra flags...
  local tag=$1 bin=$2 model=$3 batches=$4
  shift 4
  timeout 120 $b/bin/$bin bench latency configs/$model --load-format dummy --device cuda \
    --batch-sizes $batches --input-len 1024 --output-len 32 "$@" >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-22s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
for r in 1 2 3; do
  (( SECONDS - t0 > 420 )) && break
  step fp8-main_r$r lathe_main Qwen3-8B-FP8 1,4,16
  step fp8-new_r$r lathe Qwen3-8B-FP8 1,4,16
  step bf16-main_r$r lathe_main Qwen3-8B 1,16
  step bf16-new_r$r lathe Qwen3-8B 1,16
done
python3 - $W <<'PY' >>$S
import sys, glob, collections, re, os
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(f"{w}/s_*_r*.txt"):
    m = re.match(r"s_(.+)_r\d\.txt", os.path.basename(f))
    for line in open(f):
        x = line.split()
        if len(x) > 8 and x[0].isdigit():
            t[m.group(1)][int(x[0])].append(float(x[3]))
med = lambda l: sorted(l)[len(l) // 2] if l else float("nan")
for d in ("fp8", "bf16"):
    main, new = t[d + "-main"], t[d + "-new"]
    for bs in sorted(main):
        print("%-4s B%-2d main %.3f ms  new %.3f ms  new/main %.4f  (runs %d/%d)" % (
            d, bs, med(main[bs]), med(new[bs]), med(new[bs]) / med(main[bs]), len(main[bs]), len(new[bs])))
PY
step fp8-phases lathe Qwen3-8B-FP8 1,4,16 --step-breakdown
step bf16-phases lathe Qwen3-8B 1,16 --step-breakdown
for m in fp8 bf16; do sed -n '/^decode step phases/,/^inputs:/p' $W/s_$m-phases.txt >>$S; done
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
