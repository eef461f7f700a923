#!/usr/bin/env bash
# Session 33, call 10 (perf-bundle at this commit: the final kernels plus bench latency's prefill
# FLOP/s against a cuBLASLt GEMM reference measured in the same process): the prefill of 1024
# tokens a sequence at batch 1 and 16 for Qwen3-8B-FP8, 8B BF16 and Qwen3-32B-FP8.
#   scripts/device-bundle.sh -j 2 --targets "lathe" --bundle perf-bundle --xz
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s33c10; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
t0=$SECONDS
for m in Qwen3-8B-FP8 Qwen3-8B Qwen3-32B-FP8; do
  timeout 120 $b/bin/lathe bench latency configs/$m --load-format dummy --device cuda --batch-sizes 1,16 \
    --input-len 1024 --output-len 4 --out $W/$m.json >$W/$m.txt 2>$W/$m.log
  echo "== $m rc=$? $((SECONDS - t0))s" >>$S
  grep -E "read ceiling|GEMM reference" $W/$m.txt >>$S
  sed -n '/^ *batch  *prefill_TFLOP/,/^prefill_TFLOP:/p' $W/$m.txt >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
