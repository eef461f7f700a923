# Session 19, call 7 (main's final code): the decode GEMV in context (each launch right after the
# residual-add RMSNorm that writes its x, chained), with the read ceiling and the peers (cuBLASLt
# FP8 per-tensor, cuBLAS BF16) measured in the same process, m = 1, 4, 16.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
echo "bundle $(cat $b/COMMIT)" >$OUT/kernels.txt
timeout 400 $b/bin/lathe_bench_kernels --after-norm --shapes decode --widths 1,4,16 --out $OUT/kern >>$OUT/kernels.txt 2>&1
echo "rc=$?" >>$OUT/kernels.txt
tail -40 $OUT/kernels.txt
