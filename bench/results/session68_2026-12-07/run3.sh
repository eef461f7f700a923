#!/usr/bin/env bash
# Session 68, third call (bundle p67b-bundle = 7fcfe7d's code; any card): where the split-K kernel's
# warps wait, per SASS instruction (Nsight Compute's source page ranked by
# bench/kernels/sass_stalls.py), one launch each, caches as the benchmark leaves them:
# - the batch-1 cells at 16k that call 2 profiled by section (32/8/128 FP8 and BF16, 64/8/128 FP8:
#   variant 26 on 72 / 40 CTAs, FP8 issue-bound with 0.8-1.0 eligible warps a scheduler, BF16 on
#   the long scoreboard);
# - session 65's run6.sh cells, which never ran: 64/8/128 batch 16 at 1k (the persistent 25) and
#   32/8/128 batch 16 at 1k (24 per split), BF16, the cells furthest behind SDPA.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p67b-bundle}"
rm -rf "$W"
W=$(mktemp -d)  # outside $OUT: $OUT/work.tar.xz carries it
command -v ncu >/dev/null ||
  export PATH="$PATH:/usr/local/cuda/bin:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)"
for c in 32/8/128:fp8:1:16384:splitk_mma 32/8/128:bf16:1:16384:splitk_mma 64/8/128:fp8:1:16384:splitk_mma \
  64/8/128:bf16:16:1024:splitk_persistent 32/8/128:bf16:16:1024:splitk_mma; do
  IFS=: read -r shape dtype batch ctx kernel <<<"$c"
  tag="sass_$(echo "$shape" | tr / _)_${dtype}_b${batch}_l$ctx"
  timeout 150 ncu --clock-control none --cache-control none --set full --import-source yes \
    --kernel-name-base demangled -k "regex:$kernel" -s 2 -c 1 --export "$W/$tag" \
    "$b/bin/lathe_bench_attention" --kernels serve --policies auto+pack --shapes "$shape" --dtypes "$dtype" \
    --batches "$batch" --contexts "$ctx" >"$W/$tag.txt" 2>&1
  echo "== $c rc=$? $((SECONDS - t0))s" >>"$S"
  ncu --import "$W/$tag.ncu-rep" --page source --print-source sass --csv -k "regex:$kernel" >"$W/${tag}_sass.csv" 2>&1
  python3 bench/kernels/sass_stalls.py "$W/${tag}_sass.csv" --top 40 >"$W/${tag}_top.txt" 2>&1
  python3 bench/kernels/sass_stalls.py "$W/${tag}_sass.csv" --top 12 2>&1 | cut -c1-150 >>"$S"
  xz -9 "$W/${tag}_sass.csv"
  rm -f "$W/$tag.ncu-rep"
  tar -C "$W" -cJf "$OUT/work.tar.xz" .
done
cat "$S"
