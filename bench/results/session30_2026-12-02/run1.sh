# Session 30, call 1 (s30a-bundle, main dcedecb's lathe_bench_kernels): where the 16-row tier's
# time goes on the small Qwen3-8B-FP8 shapes (o 4096x4096, q|k|v 6144x4096, down 4096x12288), where
# it takes 1.6-1.9x cuBLASLt's time (session 29, call 1b). Nsight Compute (full set, per-SASS stall
# samples) on o at m = 16 and m = 4 and on q|k|v at m = 16; then a sweep of the 16-row tier's knobs
# at m = 16 on every fp8 decode shape (K split, ring depth, warpgroup MMA, three CTAs per SM;
# timing only: a K split other than auto's changes the bytes).
#   scripts/device-bundle.sh --build build --bundle gemv-bundle --xz --targets "lathe_bench_kernels"
set -uo pipefail
b=$PWD/gemv-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
OUT=$W/ncu timeout 300 bash bench/kernels/device_run.sh --ncu qwen3-8b/o_proj:16:auto \
  --ncu qwen3-8b/o_proj:4:auto --ncu "qwen3-8b/qkv(fused):16:auto" >$W/ncu_run.txt 2>&1
echo "ncu rc=$? $((SECONDS - t0))s" >>$S
for r in 1 2; do
  timeout 150 $b/bin/lathe_bench_kernels --variants --after-norm --shapes decode --widths 16 --dtype fp8 --no-peers \
    --variant-list auto,auto:wg,auto:b3,auto:s3,auto:s4,ring:k2,ring:k3,ring:k8,ring:k16 >$W/sweep_r$r.txt 2>&1
  echo "sweep r$r rc=$? $((SECONDS - t0))s" >>$S
done
python3 - $W <<'PY' >>$S
import sys, collections
w = sys.argv[1]
rows = collections.OrderedDict()
for r in (1, 2):
    for line in open(f"{w}/sweep_r{r}.txt"):
        f = line.split()
        if len(f) >= 9 and f[4] == "fp8" and f[5] == "16" and f[6].startswith("v:"):
            rows.setdefault((f[0], f[1]), collections.OrderedDict()).setdefault(f[6][2:], []).append(float(f[7] if f[7][0].isdigit() else f[8]))
for key, v in rows.items():
    print("%-10s %-11s " % key + "  ".join("%s %.1f" % (n, min(t)) for n, t in v.items()))
PY
grep -h "read ceiling" $W/sweep_r1.txt >>$S
sed -n '/^== /,$p' $W/ncu_run.txt | head -150 >>$S
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
