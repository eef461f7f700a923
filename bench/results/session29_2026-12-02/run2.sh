# Session 29, call 2 (s29b-bundle: lathe_bench_kernels of this build and main's at 43144f1 as
# lathe_bench_kernels_main): the kernel table in context (--after-norm) at m = 1, 4, 16 on every fp8
# and bf16 decode shape, main's binary against this build's, alternated, two rounds, no peer (call 1
# has the cuBLASLt column); one table of both.
#   scripts/device-bundle.sh --build build --bundle s29b-bundle --xz --targets "lathe_bench_kernels" \
#     --add lathe_bench_kernels_main=/tmp/mainsrc/build/bench/kernels/lathe_bench_kernels
set -uo pipefail
b=$PWD/s29b-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
kern() {  # tag, binary, dtype
  timeout 120 $b/bin/$2 --variants --variant-list auto --after-norm --shapes decode --widths 1,4,16 \
    --dtype $3 --no-peers >$W/k_$1.txt 2>&1
  echo "kernels $1 rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $W/k_$1.txt)" >>$S
}
for r in 1 2; do
  for d in fp8 bf16; do
    kern main_${d}_r$r lathe_bench_kernels_main $d
    kern new_${d}_r$r lathe_bench_kernels $d
  done
done
python3 - $W <<'PY' >>$S
import sys, collections
w = sys.argv[1]
for d in ["fp8", "bf16"]:
    rows = collections.OrderedDict()
    tags = [f"main_{d}_r1", f"new_{d}_r1", f"main_{d}_r2", f"new_{d}_r2"]
    for tag in tags:
        for line in open(f"{w}/k_{tag}.txt"):
            f = line.split()
            if len(f) >= 9 and f[4] == d and f[5].isdigit() and "v:auto" in line:
                rows.setdefault((f[0], f[1], f[5]), {})[tag] = float(f[-3])
    print(f"{d}: model      shape       m   main_r1  new_r1 main_r2  new_r2  new/main")
    for key, v in rows.items():
        g = lambda c: v.get(c, float("nan"))
        print("%-10s %-11s %2s %7.1f %7.1f %7.1f %7.1f   %.3f" % (key + tuple(g(t) for t in tags) +
              ((g(tags[1]) + g(tags[3])) / (g(tags[0]) + g(tags[2])),)))
PY
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
