#!/usr/bin/env bash
# Session 39, call 2: the bf16 lm_head on stream:tma:b2 (gemv_auto_variant's new rule) and the
# tensor copies' promotion default none. (1) gpu_cuda_gemv_test as the default now runs (its
# Qwen3-8B model cases include the bf16 151936x4096 lm_head, every row of every tier byte-equal
# to m = 1 and the float64 reference), then again with every bf16 shape forced onto
# stream:tma:b2 (LATHE_GEMV_TEST_VARIANT_BF16). (2) The lm_head shapes, bf16, every width:
# auto (now the stream), ringbal (the old choice), stream:tma:b3, two rounds. (3) The full kernel
# table (every shape, width and peer) for docs/PERFORMANCE.md.
# bundle: scripts/device-bundle.sh -j 2 --targets "lathe_bench_kernels gpu_cuda_gemv_test" --bundle gemv-bundle --xz
set -uo pipefail
b=$PWD/gemv-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s39c2; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader >>$S
t0=$SECONDS
timeout 200 $b/bin/gpu_cuda_gemv_test --gtest_brief=1 >$W/gemv_test_default.txt 2>&1
echo "gpu_cuda_gemv_test (default) rc=$? $(tail -n 3 $W/gemv_test_default.txt | grep -E 'PASSED|FAILED' | tr '\n' ' ') $((SECONDS - t0))s" >>$S
LATHE_GEMV_TEST_VARIANT_BF16=stream:tma:b2 timeout 200 $b/bin/gpu_cuda_gemv_test --gtest_brief=1 \
  --gtest_filter='*bf16*:GemvWideRange*' >$W/gemv_test_stream_b2.txt 2>&1
echo "gpu_cuda_gemv_test (bf16 forced stream:tma:b2) rc=$? $(tail -n 3 $W/gemv_test_stream_b2.txt | grep -E 'PASSED|FAILED' | tr '\n' ' ') $((SECONDS - t0))s" >>$S
for r in 1 2; do
  timeout 120 $b/bin/lathe_bench_kernels --variants --variant-list auto,ringbal,stream:tma:b3 --only lm_head \
    --dtype bf16 --widths 1,2,4,8,16,24,32 --no-peers >$W/lm_head_r$r.txt 2>&1
  echo "== lm_head variants round $r rc=$? $((SECONDS - t0))s" >>$S
done
timeout 200 $b/bin/lathe_bench_kernels >$W/table.txt 2>&1
echo "== full table rc=$? $((SECONDS - t0))s" >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
grep -hE "FAILED|Failure" $W/gemv_test_*.txt | head -20
grep -h "read ceiling" $W/lm_head_r1.txt $W/table.txt
grep -hE "v:" $W/lm_head_r1.txt | awk '{print $1,$2,$6,$7,$8,$10}' | paste - - -
