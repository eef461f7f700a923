# Session 31, call 1 (s31-bundle: main 763aa89's lathe and lathe_bench_kernels): is the register
# ring's K split still right at 1 and 4 rows? The rule (one wave of 264 CTAs, >= 6 steps a split)
# predates the split slots (session 29), the fused norm and the epilogues. (1) kernel sweep in
# context after the norm, fp8 and bf16, m = 1 / 4, K splits 3-12 at two and three CTAs per SM;
# (2) Qwen3-8B-FP8 decode steps with one shape's split overridden (LATHE_GEMV_SHAPE_VARIANTS) and
# two batch-1 attention levers, alternated with the default, three rounds.
#   scripts/device-bundle.sh --build build --bundle s31-bundle --xz --targets "lathe lathe_bench_kernels"
set -uo pipefail
b=$PWD/s31-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
V=auto,ring:k3:g16,ring:k4:g16,ring:k6:g16,ring:k8:g16,ring:k12:g16,ring:k4:g16:b3,ring:k6:g16:b3,ring:k8:g16:b3,ring:k12:g16:b3
for d in fp8 bf16; do
  timeout 150 $b/bin/lathe_bench_kernels --variants --after-norm --shapes decode --widths 1,4 --dtype $d --no-peers \
    --variant-list $V >$W/sweep_$d.txt 2>&1
  echo "sweep $d rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $W/sweep_$d.txt)" >>$S
done
python3 - $W <<'PY' >>$S
import sys, collections
w = sys.argv[1]
for d in ("fp8", "bf16"):
    rows = collections.OrderedDict()
    for line in open(f"{w}/sweep_{d}.txt"):
        f = line.split()
        if len(f) >= 8 and f[4] == d and f[6].startswith(("v:", "read")):
            name = "read" if f[6] == "read" else f[6][2:]
            try:
                us = float(f[-3])
            except ValueError:
                continue
            rows.setdefault((f[0], f[1], f[5]), collections.OrderedDict())[name] = us
    for key, v in rows.items():
        best = min((t, n) for n, t in v.items() if n not in ("read", "auto"))
        print("%-4s %-10s %-11s m=%-2s " % ((d,) + key) + " ".join("%s %.1f" % (n.replace("ring:", "").replace(":g16", ""), t) for n, t in v.items()) + "  | best %s %.1f vs auto %.1f" % (best[1], best[0], v.get("auto", 0)))
PY
step() {  # tag, env..., runs Qwen3-8B-FP8 at batch 1/2/4/16
  local tag=$1; shift
  env "$@" timeout 120 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy \
    --device cuda --batch-sizes 1,2,4,16 --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-22s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
G=LATHE_GEMV_SHAPE_VARIANTS
for r in 1 2 3; do
  (( SECONDS - t0 > 500 )) && break
  step base_r$r X=1
  step o-k4_r$r $G=fp8/4096x4096=ring:k4:g16
  step o-k8_r$r $G=fp8/4096x4096=ring:k8:g16
  step o-k8b3_r$r $G=fp8/4096x4096=ring:k8:g16:b3
  step qkv-k3_r$r $G=fp8/6144x4096=ring:k3:g16
  step qkv-k4_r$r $G=fp8/6144x4096=ring:k4:g16
  step qkv-k6_r$r $G=fp8/6144x4096=ring:k6:g16
  step down-k4_r$r $G=fp8/4096x12288=ring:k4:g16
  step down-k6_r$r $G=fp8/4096x12288=ring:k6:g16
  step down-k12_r$r $G=fp8/4096x12288=ring:k12:g16
  step down-k12b3_r$r $G=fp8/4096x12288=ring:k12:g16:b3
  step attn-floor64_r$r LATHE_ATTN_MIN_KV_PER_SPLIT=64
  step attn-slice2_r$r LATHE_ATTN_DECODE_SPLIT_SLICES=2 LATHE_ATTN_MIN_KV_PER_SLICE=64
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
base = t["base"]
print("config          " + "".join("   B%-3d ms  /base" % b for b in sorted(base)))
for cfg in sorted(t, key=lambda c: (c != "base", c)):
    print("%-15s " % cfg + "".join("  %7.3f %6.4f" % (med(t[cfg][b]), med(t[cfg][b]) / med(base[b])) for b in sorted(base)))
PY
grep -h "gemv\|variant\|error\|Error" $W/s_o-k8b3_r1.log $W/s_down-k12b3_r1.log | head -8 >>$S
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
