#!/usr/bin/env bash
# Session 35, call 2: where the warp-specialised kernel's time goes. lathe_bench_prefill_attention
# (both kernels; the BF16 producer now computes its copies' sources before issuing them) beside three
# diagnostic builds of the ws kernel (LATHE_WS_DIAG, timing only, wrong bytes): 1 = no softmax
# (P = raw scores, alpha = 1), 2 = no producer (consumers read the ring as it is, no barriers),
# 3 = both. 32/8/128, BF16 and FP8 KV, two rounds.
#   scripts/device-bundle.sh -j 2 --targets "lathe_bench_prefill_attention" --bundle perf-bundle --xz \
#     --add lathe_bench_prefill_attention_diag1=/tmp/diag/lathe_bench_prefill_attention_diag1 (and 2, 3)
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s35c2; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>$S
t0=$SECONDS
for round in 1 2; do
  for bin in lathe_bench_prefill_attention lathe_bench_prefill_attention_diag1 lathe_bench_prefill_attention_diag2 \
      lathe_bench_prefill_attention_diag3; do
    k=ws; [[ $bin == lathe_bench_prefill_attention ]] && k=ws,mma
    timeout 120 $b/bin/$bin --shapes 32/8/128 --kernels $k >$W/${bin}_r$round.txt 2>&1
    echo "== $bin round $round rc=$? $((SECONDS - t0))s" >>$S
    grep -v "gemm pin" $W/${bin}_r$round.txt >>$S
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
