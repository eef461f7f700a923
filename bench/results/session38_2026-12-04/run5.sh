#!/usr/bin/env bash
# Session 38, call 5: NOT RUN (no machine was lent for the rest of the session); kept ready for the
# next one. (1) The decode GEMV with and without its weight loads' L2::256B prefetch hint (the
# split-K K/V copies measured 4-9% faster without 256-byte L2 promotion, calls 3-4), alternated,
# two rounds, cuBLASLt FP8 and cuBLAS BF16 beside them in round 1. gemv-bundle:
# bin/lathe_bench_kernels from main and bin/lbk_nohint from branch wip/gemv-l2hint (one commit on
# main: the hint removed from gemv_ring_kernel.cuh's load_streaming):
#   scripts/device-bundle.sh -j 2 --targets "lathe_bench_kernels lathe_bench_prefill_attention" \
#     --bundle gemv-bundle --xz --add lbk_nohint=<wip/gemv-l2hint's build-device/bench/kernels/lathe_bench_kernels>
# (2) The stream GEMV's tensor-copy variants (session 9: 2-10 points under the ring, with 256-byte
# promotion) without promotion. (3) The prefill ws kernel's K/V copies with 256-byte promotion (its
# default) and none.
set -uo pipefail
b=$PWD/gemv-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s38c5; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT); added: $(cat $b/ADDED 2>/dev/null | tr '\n' ' ')" >$S
t0=$SECONDS
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
for pr in 256 none 256 none; do
  timeout 120 $b/bin/lathe_bench_kernels --variants --variant-list auto,stream:tma:b2,stream:tma:b3 --only qwen3- \
    --widths 1,4,16 --tma-l2-promotion $pr >>$W/tma_$pr.txt 2>&1
  echo "== gemv stream:tma promotion $pr rc=$? $((SECONDS - t0))s" >>$S
done
tail -n 40 $W/tma_256.txt $W/tma_none.txt >>$S
for pr in 256 none 256 none; do
  timeout 100 $b/bin/lathe_bench_prefill_attention --kernels ws --kv-l2-promotion $pr >>$W/prefill_$pr.txt 2>&1
  echo "== prefill ws promotion $pr rc=$? $((SECONDS - t0))s" >>$S
done
tail -n 30 $W/prefill_256.txt $W/prefill_none.txt >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
