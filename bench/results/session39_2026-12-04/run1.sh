#!/usr/bin/env bash
# Session 39, call 1 (session 38's run5.sh without the prefill part, which would not fit the carry
# limit beside two GEMV binaries). (1) The decode GEMV with and without its weight loads'
# L2::256B prefetch size hint, alternated, two rounds, cuBLASLt FP8 and cuBLAS BF16 beside them in
# round 1. gemv-bundle: bin/lathe_bench_kernels from main and bin/lbk_nohint built from main with
# the hint removed from gemv_ring_kernel.cuh's load_streaming:
#   scripts/device-bundle.sh -j 2 --targets lathe_bench_kernels --bundle gemv-bundle --xz \
#     --add lbk_nohint=/tmp/lbk_nohint
# (2) The stream GEMV's tensor-copy variants without promotion (session 9 measured them 2-10
# points under the ring with 256-byte promotion).
set -uo pipefail
b=$PWD/gemv-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s39c1; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT); added: $(cat $b/ADDED 2>/dev/null | tr '\n' ' ')" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader >>$S
t0=$SECONDS
for r in 1 2; do
  for v in lathe_bench_kernels lbk_nohint; do
    peers=""; [[ $r == 2 ]] && peers=--no-peers
    timeout 150 $b/bin/$v --only qwen3- --widths 1,4,16 $peers >$W/gemv_${v}_r$r.txt 2>&1
    echo "== gemv $v round $r rc=$? $((SECONDS - t0))s" >>$S
  done
done
for pr in 256 none; do
  timeout 100 $b/bin/lathe_bench_kernels --variants --variant-list auto,stream:tma:b2,stream:tma:b3 --only qwen3- \
    --widths 1,16 --no-peers --tma-l2-promotion $pr >>$W/tma_$pr.txt 2>&1
  echo "== gemv stream:tma promotion $pr rc=$? $((SECONDS - t0))s" >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
for f in $W/gemv_*_r*.txt; do echo "-- $(basename $f)"; grep -E "ceiling|fp8|bf16" $f | grep -vE "cublas" | head -40; done
grep -hE "cublas" $W/gemv_lathe_bench_kernels_r1.txt | head -30
tail -n 25 $W/tma_256.txt $W/tma_none.txt
