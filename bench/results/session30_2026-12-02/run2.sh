# Session 30, call 2 (s30b-bundle: 32-bit self-flagging split slots in every register-ring tier,
# commit 94e06f5 + this script): gpu_cuda_gemv_test in 4 shards (every tier byte-equal per row to the
# 1-row kernel, the float64 reference, every test ending with every split slot empty; new: 203x2048,
# whose last row block has 75 rows), then this build's kernel table in context at m = 1, 4, 16 with
# cuBLASLt FP8 / cuBLAS BF16 in the same process, fp8 and bf16, two rounds; then the same sweep as
# call 1 (main's binary) at m = 16 for auto and auto:wg.
#   scripts/device-bundle.sh --build build --bundle s30b-bundle --xz \
#     --targets "gpu_cuda_gemv_test lathe_bench_kernels"
set -uo pipefail
b=$PWD/s30b-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
pids=(); rc=0
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 240 $b/bin/gpu_cuda_gemv_test >$W/gemv.$i.log 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
cat $W/gemv.*.log >$W/gemv_test.log
echo "gpu_cuda_gemv_test rc=$rc passed $(grep -h '^\[  PASSED  \]' $W/gemv.*.log | awk '{n += $4} END {print n + 0}'), failed lines $(grep -c '^\[  FAILED  \]' $W/gemv_test.log) $((SECONDS - t0))s" >>$S
grep -h "FAILED \]\|split slots left" $W/gemv_test.log | head -20 >>$S
for r in 1 2; do
  for d in fp8 bf16; do
    timeout 120 $b/bin/lathe_bench_kernels --variants --variant-list auto --after-norm --shapes decode \
      --widths 1,4,16 --dtype $d >$W/kernels_${d}_r$r.txt 2>&1
    echo "kernels $d r$r rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' $W/kernels_${d}_r$r.txt)" >>$S
  done
done
timeout 100 $b/bin/lathe_bench_kernels --variants --after-norm --shapes decode --widths 16 --dtype fp8 --no-peers \
  --variant-list auto,auto:wg >$W/sweep16.txt 2>&1
echo "sweep16 rc=$? $((SECONDS - t0))s" >>$S
python3 - $W <<'PY' >>$S
import sys, collections
w = sys.argv[1]
for d in ["fp8", "bf16"]:
    rows = collections.OrderedDict()
    for r in (1, 2):
        for line in open(f"{w}/kernels_{d}_r{r}.txt"):
            f = line.split()
            if len(f) >= 9 and f[4] == d and f[5].isdigit() and f[-1].endswith("%"):
                impl = "ours" if f[6].startswith("v:") else f[6]
                if impl in ("norm", "read"):
                    continue
                rows.setdefault((f[0], f[1], f[5]), {}).setdefault(impl, []).append((float(f[-3]), f[-1]))
    print(f"{d}: model      shape        m   ours us (r1/r2)  %ceil    peer us   %ceil")
    for key, v in rows.items():
        o = v.get("ours", []); p = [x for k, x in v.items() if k != "ours"]
        p = p[0] if p else []
        fmt = lambda l: "/".join("%.1f" % t for t, _ in l) + "  " + (l[0][1] if l else "")
        print("%-10s %-11s %2s   %-22s %s" % (key + (fmt(o), fmt(p))))
PY
grep -h "v:" $W/sweep16.txt >>$S
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
