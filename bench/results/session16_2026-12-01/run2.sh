#!/usr/bin/env bash
# Session 16, call 2: where the next-weight L2 prefetch loses. Diagnostic build (DIAG env knobs,
# not in main): hint one transition only (by the next weight's n x k), issue from warp 0 only,
# or at the producer's start; eager per-op profiles off vs 16 MiB. Qwen3-8B-FP8, batch 1 and 4.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | tee $S
echo "bundle $(cat $b/COMMIT) + diag knobs" >>$S
run() {  # name, env...
  local name=$1; shift
  env "$@" timeout 90 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
    --batch-sizes 1,4 --input-len 1024 --output-len 32 >$W/$name.txt 2>$W/$name.log
  printf '%-28s rc=%s %s\n' "$name" "$?" "$(awk '$1==1||$1==4{printf "B%s %s  ", $1, $4}' $W/$name.txt)" >>$S
}
for round in 1 2; do
  run off_r$round LATHE_GEMV_PREFETCH_NEXT=off
  run all16_r$round LATHE_GEMV_PREFETCH_NEXT=16
  run o16_r$round LATHE_GEMV_PREFETCH_NEXT=16 LATHE_DIAG_PF_ONLY_N=4096x4096
  run o64_r$round LATHE_GEMV_PREFETCH_NEXT=64 LATHE_DIAG_PF_ONLY_N=4096x4096
  run gateup16_r$round LATHE_GEMV_PREFETCH_NEXT=16 LATHE_DIAG_PF_ONLY_N=24576x4096
  run down16_r$round LATHE_GEMV_PREFETCH_NEXT=16 LATHE_DIAG_PF_ONLY_N=4096x12288
  run qkv16_r$round LATHE_GEMV_PREFETCH_NEXT=16 LATHE_DIAG_PF_ONLY_N=6144x4096
  run warp0_16_r$round LATHE_GEMV_PREFETCH_NEXT=16 LATHE_DIAG_PF_WARP0=1
  run first16_r$round LATHE_GEMV_PREFETCH_NEXT=16 LATHE_DIAG_PF_FIRST=1
  run o64_warp0_r$round LATHE_GEMV_PREFETCH_NEXT=64 LATHE_DIAG_PF_ONLY_N=4096x4096 LATHE_DIAG_PF_WARP0=1
done
for mode in off 16; do
  LATHE_PROFILE=1 LATHE_GEMV_PREFETCH_NEXT=$mode timeout 90 $b/bin/lathe bench latency configs/Qwen3-8B-FP8 --load-format dummy \
    --device cuda --batch-sizes 1 --input-len 1024 --output-len 16 >$W/prof_$mode.txt 2>$W/prof_$mode.log
  echo "== profile $mode rc=$?" >>$S
  grep -E 'decode steps of|gemv 24576x4096|gemv 4096x12288|gemv 6144x4096|gemv 4096x4096|between ops|  norm|attention  |silu|rope' $W/prof_$mode.txt | cut -c1-120 >>$S
done
tar czf $OUT/work.tgz -C $W .
cat $S
