# Session 31, call 2 (s31b-bundle: this build's lathe and gpu_cuda_gemv_test, with main 763aa89's
# lathe from s31-bundle as lathe_main): `auto`'s K split floor in bytes (96 KB a split: bf16
# 4096x4096 takes 8 splits of 4 steps instead of 5 of 7). gpu_cuda_gemv_test on the new choice;
# Qwen3-8B BF16 decode steps, main against new, alternated, three rounds (plus, on the new
# binary, bf16 down at 6 splits by override); Qwen3-8B-FP8 batch 1 as a control (no fp8 shape changes).
#   scripts/device-bundle.sh --build build --bundle s31b-bundle --xz --targets "lathe gpu_cuda_gemv_test"
#   rm s31b-bundle/bin/gpu_cuda_gemv_test.xz  (the carry limit: the test runs in a later call)
#   cp s31-bundle/bin/lathe.xz s31b-bundle/bin/lathe_main.xz
set -uo pipefail
b=$PWD/s31b-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
[[ -x $b/bin/gpu_cuda_gemv_test ]] && timeout 240 $b/bin/gpu_cuda_gemv_test >$W/gemv_test.txt 2>&1
echo "gpu_cuda_gemv_test rc=$? $(grep -c '^\[       OK' $W/gemv_test.txt) ok, $(grep -c '^\[  FAILED' $W/gemv_test.txt) failed lines $((SECONDS - t0))s" >>$S
grep -h "PASSED\|FAILED" $W/gemv_test.txt | tail -5 >>$S
step() {  # tag, binary, model, batches, env...
  local tag=$1 bin=$2 model=$3 batches=$4; shift 4
  env X=1 "$@" timeout 120 $b/bin/$bin bench latency configs/$model --load-format dummy \
    --device cuda --batch-sizes $batches --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-26s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
for r in 1 2 3; do
  step bf16-main_r$r lathe_main Qwen3-8B 1,2,4,16
  step bf16-new_r$r lathe Qwen3-8B 1,2,4,16
  step bf16-down6_r$r lathe Qwen3-8B 1,2,4,16 LATHE_GEMV_SHAPE_VARIANTS=bf16/4096x12288=ring:k6:g16
  step fp8-main_r$r lathe_main Qwen3-8B-FP8 1,16
  step fp8-new_r$r lathe Qwen3-8B-FP8 1,16
done
python3 - $W <<'PY' >>$S
import sys, glob, collections, re, os
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(f"{w}/s_*.txt"):
    m = re.match(r"s_(.+)_r\d\.txt", os.path.basename(f))
    for line in open(f):
        x = line.split()
        if len(x) > 8 and x[0].isdigit():
            t[m.group(1)][int(x[0])].append(float(x[3]))
med = lambda l: sorted(l)[len(l) // 2] if l else float("nan")
for cfg in sorted(t):
    base = t[cfg.split("-")[0] + "-main"]
    print("%-12s " % cfg + "".join("  B%d %.3f %.4f" % (b, med(v), med(v) / med(base[b])) for b, v in sorted(t[cfg].items())))
PY
grep -h "linear route\|gemv" $W/s_bf16-new_r1.log | head -6 >>$S
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
