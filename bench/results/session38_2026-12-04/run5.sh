#!/usr/bin/env bash
# Session 38, call 5. gemv-bundle: bin/lathe_bench_kernels at b5a67fc (main's GEMV code) and
# bin/lbk_nohint (8d8a27b, branch wip/gemv-l2hint: the GEMV's weight loads without the L2::256B
# prefetch hint), alternated, two rounds, cuBLASLt FP8 and cuBLAS BF16 beside them in round 1.
#   scripts/device-bundle.sh -j 2 --targets "lathe_bench_kernels" --bundle gemv-bundle --xz \
#     --add lbk_nohint=<wip/gemv-l2hint's build-device/bench/kernels/lathe_bench_kernels>
set -uo pipefail
b=$PWD/gemv-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s38c5; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT); added: $(cat $b/ADDED 2>/dev/null | tr '\n' ' ')" >$S
t0=$SECONDS
# 1. GEMV: main against no hint, Qwen3-8B and 32B FP8 decode shapes, alternated, peers in round 1
for r in 1 2; do
  for v in lathe_bench_kernels lbk_nohint; do
    peers=""; [[ $r == 2 ]] && peers=--no-peers
    timeout 120 $b/bin/$v --only qwen3- --widths 1,4,16 $peers >$W/gemv_${v}_r$r.txt 2>&1
    echo "== gemv $v round $r rc=$? $((SECONDS - t0))s" >>$S
  done
done
grep -h "read ceiling" $W/gemv_lathe_bench_kernels_r1.txt | head -1 >>$S
for f in $W/gemv_*_r*.txt; do
  echo "-- $(basename $f)" >>$S
  grep -E "fp8|bf16" $f | grep -vE "cublas|read \(same" | head -60 >>$S
done
grep -hE "cublasLt|read \(same" $W/gemv_lathe_bench_kernels_r1.txt | head -30 >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
