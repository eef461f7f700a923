#!/usr/bin/env bash
# Session 39, call 4 (a first attempt with three rounds, Qwen3-32B-FP8 and the 16k K/V promotion
# A/B lost its machine mid-run: "stopped answering"; this is the shortened script): decode steps with the session's defaults against the old ones, in the same
# process group, alternated, two rounds (lathe bench latency, dummy weights): the lm_head on
# stream:b2:tma (the new auto) vs ringbal (LATHE_GEMV_SHAPE_VARIANTS) on Qwen3-8B-FP8 and
# Qwen3-8B (BF16), batch 1, 4, 16, input 1024.
# Then gpu_batch_invariance on this commit (Qwen3-8B and -8B-FP8 shapes cut to 2 layers, dummy
# weights: its vocabulary-wide lm_head now takes stream:b2:tma; A's logits alone = beside 31).
#   scripts/device-bundle.sh -j 2 --targets "lathe gpu_batch_invariance" --bundle step-bundle --xz
set -uo pipefail
b=$PWD/${BUNDLE:-step-bundle}  # BUNDLE=full-bundle: one shared-library bundle of everything (602d3fa)
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=/tmp/s39c4; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
timeout 300 $b/bin/gpu_batch_invariance >$W/invariance.txt 2>&1
echo "gpu_batch_invariance rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $W/invariance.txt | tr '\n' ' ') $((SECONDS - t0))s" >>$S
grep -E '^\[  FAILED  \]|Failure|differ' $W/invariance.txt | head -20 >>$S
OLD_HEAD="bf16/151936x4096=ringbal,bf16/151936x5120=ringbal"
step() {  # tag, model, batches, input, env...
  local tag=$1 model=$2 batches=$3 input=$4
  shift 4
  env "$@" timeout 150 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda \
    --batch-sizes $batches --input-len $input --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-24s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
for r in 1 2; do
  for m in Qwen3-8B-FP8 Qwen3-8B; do
    step head-new-$m-r$r $m 1,4,16 1024 LATHE_NONE=1
    step head-old-$m-r$r $m 1,4,16 1024 LATHE_GEMV_SHAPE_VARIANTS=$OLD_HEAD
  done
done
grep -h "lm_head\|151936" $W/s_head-new-Qwen3-8B-FP8-r1.log $W/s_head-old-Qwen3-8B-FP8-r1.log | head -6 >>$S
python3 - $W <<'PY' >>$S
import sys, glob, collections, re, os
t = collections.defaultdict(list)
for f in glob.glob(f"{sys.argv[1]}/s_*.txt"):
    tag = re.sub(r"-r\d$", "", os.path.basename(f)[2:-4])
    for line in open(f):
        x = line.split()
        if len(x) > 8 and x[0].isdigit():
            t[(tag, int(x[0]))].append(float(x[3]))
med = lambda l: sorted(l)[len(l) // 2]
pairs = [(f"head-new-{m}", f"head-old-{m}") for m in ("Qwen3-8B-FP8", "Qwen3-8B", "Qwen3-32B-FP8")]
pairs.append(("kv-none", "kv-256"))
for new, old in pairs:
    for b in (1, 4, 16):
        if (new, b) in t and (old, b) in t:
            n, o = med(t[(new, b)]), med(t[(old, b)])
            print(f"{new:26s} B{b:<3d} new {n:.3f} ms  old {o:.3f} ms  new/old {n / o:.4f}  (n={len(t[(new, b)])})")
PY
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
