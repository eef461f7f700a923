#!/usr/bin/env bash
# Session 35, call 8 (perf-bundle at the commit below): the kernel benchmark (both kernels, all three
# shapes, cuBLASLt reference in the same process) and the PyTorch SDPA peer on the same cells, one call.
#   scripts/device-bundle.sh -j 2 --targets "lathe_bench_prefill_attention" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s35c8; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
timeout 80 $b/bin/lathe_bench_prefill_attention --out $W >$W/bench.txt 2>&1
echo "== bench rc=$? $((SECONDS - t0))s" >>$S
grep -v "gemm pin" $W/bench.txt >>$S
timeout 100 python3 tools/peers/sdpa_prefill.py --out $W/sdpa_prefill.csv >$W/sdpa_prefill.txt 2>&1
echo "== sdpa_prefill rc=$? $((SECONDS - t0))s" >>$S
cat $W/sdpa_prefill.txt >>$S
cat $S
