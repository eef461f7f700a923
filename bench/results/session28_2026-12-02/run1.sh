# Session 28, call 1 (s28a-bundle: the register ring's scaled fp8 decode, uncommitted tree on 57e0ff4):
# the FP8 conversion tests, the GEMV suite (4 shards; its new ScaledDecodeGivesTheExactDecodesBytes),
# then the kernel table in context (--after-norm) at m = 1, 4, 16 on every decode shape, main's
# bench binary (57e0ff4, the exact cvt decode) against this tree's, alternated, two rounds, and one
# run of this tree's with the cuBLASLt FP8 peer beside it.
#   scripts/device-bundle.sh --build build --bundle s28a-bundle --xz \
#     --targets "lathe_bench_kernels gpu_cuda_gemv_test" \
#     --add lathe_bench_kernels_main=/tmp/mainbin/lathe_bench_kernels
set -uo pipefail
b=$PWD/s28a-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
# (the FP8 conversion test did not fit this bundle: call 2)
timeout 100 $b/bin/gpu_cuda_gemv_test --gtest_filter='*ScaledDecode*:*WideRange*' >$OUT/gemv_scaled.log 2>&1
echo "gemv scaled rc=$? $(grep -h '^\[  PASSED  \]\|^\[  FAILED  \]' $OUT/gemv_scaled.log | head -3) $((SECONDS - t0))s" >>$S
grep -h "Failure\|FAILED \]" -A4 $OUT/gemv_scaled.log | head -30 >>$S
pids=(); rc=0
for i in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 240 $b/bin/gpu_cuda_gemv_test --gtest_filter='-*ScaledDecode*:*WideRange*' >$W/gemv.$i.log 2>&1 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
cat $W/gemv.*.log >$OUT/gemv_rest.log
echo "gemv rest rc=$rc passed $(grep -h '^\[  PASSED  \]' $W/gemv.*.log | awk '{n += $4} END {print n + 0}'), failed lines $(grep -c '^\[  FAILED  \]' $OUT/gemv_rest.log) $((SECONDS - t0))s" >>$S
grep -h "FAILED \]" $OUT/gemv_rest.log | head -10 >>$S
kern() {  # tag, binary, extra args
  local tag=$1 bin=$2; shift 2
  timeout 120 $b/bin/$bin --variants --variant-list auto --after-norm --shapes decode --widths 1,4,16 \
    --dtype fp8 "$@" >$W/k_$tag.txt 2>&1
  echo "kernels $tag rc=$? $((SECONDS - t0))s" >>$S
}
for r in 1 2; do
  kern main_r$r lathe_bench_kernels_main --no-peers
  kern new_r$r lathe_bench_kernels --no-peers
done
kern new_peer lathe_bench_kernels
# One table: shape, width, then us per run (main r1, new r1, main r2, new r2, new with peer), cuBLASLt.
python3 - $W <<'PY' >>$S
import sys, re, collections
w = sys.argv[1]
rows = collections.OrderedDict()
for tag in ["main_r1", "new_r1", "main_r2", "new_r2", "new_peer"]:
    for line in open(f"{w}/k_{tag}.txt"):
        f = line.split()
        if len(f) >= 9 and f[4] == "fp8" and f[5].isdigit():
            key = (f[0], f[1], f[5])
            col = "peer" if line.find("cublaslt") >= 0 else tag
            if "cublaslt" in line or "v:auto" in line:
                rows.setdefault(key, {})[col] = (float(f[-3]), f[-1])
print("%-10s %-11s %3s %s" % ("model", "shape", "m", "main_r1  new_r1  main_r2  new_r2  new_pk  cublaslt  new/main"))
for key, d in rows.items():
    g = lambda c: d[c][0] if c in d else float("nan")
    ratio = (g("new_r1") + g("new_r2")) / (g("main_r1") + g("main_r2"))
    print("%-10s %-11s %3s %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f   %.3f" % (key + (g("main_r1"), g("new_r1"), g("main_r2"), g("new_r2"), g("new_peer"), g("peer"), ratio)))
PY
tar czf $OUT/work.tgz -C $OUT work && rm -rf $W
cat $S
