# Session 28, call 4 (s28e-bundle: a diagnostic build of branch wip/scaled-decode with
# LATHE_DIAG_NO_X_SCALE: the scaled decode's weights WITHOUT the activations' 2^88 pass, so its
# outputs are wrong; main's bench at 57e0ff4 as lathe_bench_kernels_main): does the conversion's
# instruction cut pay anywhere once the activation pass is gone? The kernel table in context at
# m = 1, 4, 16, fp8, main against the diagnostic, alternated, two rounds.
#   (tree: git checkout wip/scaled-decode -- src/backends/cuda tests/gpu/cuda, plus the two
#   LATHE_DIAG_NO_X_SCALE guards and a #define at the top of fp8_convert.cuh; not committed)
#   scripts/device-bundle.sh --build build --bundle s28e-bundle --xz --targets "lathe_bench_kernels" \
#     --add lathe_bench_kernels_main=/tmp/mainbin/lathe_bench_kernels
set -uo pipefail
b=$PWD/s28e-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
kern() {  # tag, binary
  timeout 120 $b/bin/$2 --variants --variant-list auto --after-norm --shapes decode --widths 1,4,16 \
    --dtype fp8 --no-peers >$W/k_$1.txt 2>&1
  echo "kernels $1 rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $W/k_$1.txt)" >>$S
}
for r in 1 2; do
  kern main_r$r lathe_bench_kernels_main
  kern new_r$r lathe_bench_kernels
done
python3 - $W <<'PY' >>$S
import sys, collections
w = sys.argv[1]
rows = collections.OrderedDict()
tags = ["main_r1", "new_r1", "main_r2", "new_r2"]
for tag in tags:
    for line in open(f"{w}/k_{tag}.txt"):
        f = line.split()
        if len(f) >= 9 and f[4] == "fp8" and f[5].isdigit() and "v:auto" in line:
            rows.setdefault((f[0], f[1], f[5]), {})[tag] = float(f[-3])
print("model      shape       m   main_r1  new_r1 main_r2  new_r2  new/main")
for key, d in rows.items():
    g = lambda c: d.get(c, float("nan"))
    print("%-10s %-11s %2s %7.1f %7.1f %7.1f %7.1f   %.3f" % (key + tuple(g(t) for t in tags) +
          ((g("new_r1") + g("new_r2")) / (g("main_r1") + g("main_r2")),)))
PY
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
