#!/usr/bin/env bash
# Session 65, call 6 (bundle p64b-bundle = main 344dbcb's code). On an H200: session 64's run2.sh
# as it is (see run5.sh). On an H100: where the warps of the wide serve's split-K kernels wait, per
# SASS instruction (Nsight Compute's source page, bench/kernels/sass_stalls.py), in the two cells
# furthest behind SDPA: 64/8/128 batch 16 at 1k (the persistent 25) and 32/8/128 batch 16 at 1k
# (24 per split), one launch each, caches as the benchmark leaves them.
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  exec bash bench/results/session64_2026-12-07/run2.sh
fi
source scripts/bundle-env.sh "${BUNDLE:-p64b-bundle}"
command -v ncu >/dev/null ||
  export PATH="$PATH:/usr/local/cuda/bin:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)"
for c in 64/8/128:16:1024:splitk_persistent 32/8/128:16:1024:splitk_mma; do
  IFS=: read -r shape batch ctx kernel <<<"$c"
  tag="sass_$(echo "$shape" | tr / _)_b${batch}_l$ctx"
  timeout 150 ncu --clock-control none --cache-control none --set full --import-source yes \
    --kernel-name-base demangled -k "regex:$kernel" -s 2 -c 1 --export "$W/$tag" \
    "$b/bin/lathe_bench_attention" --kernels serve --policies auto+pack --shapes "$shape" --dtypes bf16 \
    --batches "$batch" --contexts "$ctx" >"$W/$tag.txt" 2>&1
  echo "== $c rc=$? $((SECONDS - t0))s" >>"$S"
  ncu --import "$W/$tag.ncu-rep" --page source --print-source sass --csv -k "regex:$kernel" >"$W/${tag}_sass.csv" 2>&1
  python3 bench/kernels/sass_stalls.py "$W/${tag}_sass.csv" --top 40 >"$W/${tag}_top.txt" 2>&1
  head -45 "$W/${tag}_top.txt" | cut -c1-150 >>"$S"
  xz -9 "$W/${tag}_sass.csv"
  rm -f "$W/$tag.ncu-rep"
done
tar -C "$W" -cJf "$OUT/work.tar.xz" .
cat "$S"
