# Session 31, call 4 (s31d-bundle: the final sources' lathe and lathe_bench_kernels): a deeper ring
# than `auto`'s where the budget allows it (bf16 s2 instead of s1, fp8 s4 instead of s2, the same
# bytes), in context after the norm at m = 1 / 4 / 16, two rounds; then Qwen3-8B BF16 decode steps
# with o and down on s2 (the two bf16 shapes without an epilogue, which is built for s1 only),
# alternated with the default, three rounds.
#   scripts/device-bundle.sh --build build --bundle s31d-bundle --xz --targets "lathe lathe_bench_kernels"
set -uo pipefail
b=$PWD/s31d-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
for r in 1 2; do
  timeout 100 $b/bin/lathe_bench_kernels --variants --after-norm --shapes decode --widths 1,4,16 --dtype bf16 \
    --no-peers --variant-list auto,auto:s2 >$W/k_bf16_r$r.txt 2>&1
  echo "bf16 r$r rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $W/k_bf16_r$r.txt)" >>$S
  timeout 100 $b/bin/lathe_bench_kernels --variants --after-norm --shapes decode --widths 1,4,16 --dtype fp8 \
    --no-peers --variant-list auto,auto:s4 >$W/k_fp8_r$r.txt 2>&1
  echo "fp8 r$r rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $W/k_fp8_r$r.txt)" >>$S
done
python3 - $W <<'PY' >>$S
import sys, collections
w = sys.argv[1]
for d in ("bf16", "fp8"):
    rows = collections.OrderedDict()
    for r in (1, 2):
        for line in open(f"{w}/k_{d}_r{r}.txt"):
            f = line.split()
            if len(f) >= 8 and f[4] == d and f[6].startswith("v:"):
                try:
                    us = float(f[-3])
                except ValueError:
                    continue
                rows.setdefault((f[0], f[1], f[5]), collections.OrderedDict()).setdefault(f[6][2:], []).append(us)
    for key, v in rows.items():
        print("%-4s %-10s %-11s m=%-2s " % ((d,) + key) + "  ".join("%s %s" % (n, "/".join("%.1f" % t for t in ts)) for n, ts in v.items()))
PY
step() {  # tag, env...
  local tag=$1; shift
  env X=1 "$@" timeout 120 $b/bin/lathe bench latency configs/Qwen3-8B --load-format dummy \
    --device cuda --batch-sizes 1,4,16 --input-len 1024 --output-len 32 >$W/s_$tag.txt 2>$W/s_$tag.log
  printf '%-16s rc=%s %4ss %s\n' "$tag" "$?" "$((SECONDS - t0))" \
    "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $4}' $W/s_$tag.txt)" >>$S
}
for r in 1 2 3; do
  step base_r$r
  step s2_r$r LATHE_GEMV_SHAPE_VARIANTS=bf16/4096x4096=ring:s2:k8:g16,bf16/4096x12288=ring:s2:k8:g16
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
    print("%-6s " % cfg + "".join("  B%d %.3f %.4f" % (b, med(v), med(v) / med(t["base"][b])) for b, v in sorted(t[cfg].items())))
PY
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
