#!/usr/bin/env bash
# Session 33, call 1 (perf-bundle: this commit's lathe, the same tree without the server's
# TCP_NODELAY as lathe_old): (1) does Nagle's algorithm hold back the first SSE chunk of a short
# prefill? Qwen3-8B-FP8 served, 1024-token prompts at concurrency 1, old and new alternated twice
# (TTFT with 2 output tokens, then TPOT/ITL with 256). (2) The prefill GEMM's pinned algorithm:
# the 1024-token prefill of Qwen3-8B-FP8 / 8B BF16 at batch 1 and 16 under LATHE_GEMM_PREFILL_PIN_M
# 256 (the former pin) .. 8192, the pinned tiles from the log. (3) LATHE_PROFILE=1 prefill tables
# at the former pin. (4) gpu_cuda_gemm_test's row invariance under each pin.
#   scripts/device-bundle.sh -j 2 --targets "lathe gpu_cuda_gemm_test" --bundle perf-bundle \
#       --with-tokenizer --xz --add lathe_old=<lathe built without the change>
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
tok=$b/tokenizer
S=$OUT/summary.txt; W=$OUT/work; mkdir -p $W
echo "bundle $(git rev-parse --short HEAD 2>/dev/null); $(cat $b/ADDED)" >$S
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>$S
t0=$SECONDS
port=8100
serve_start() {  # tag, binary, model, extra env...
  local tag=$1 bin=$2 model=$3
  port=$((port + 1))
  env "${@:4}" $b/bin/$bin serve configs/$model --load-format dummy --tokenizer $tok --device cuda \
    --port $port --max-model-len 4096 --max-num-seqs 64 --served-model-name q >$W/serve_$tag.log 2>&1 &
  server=$!
  for _ in $(seq 1 120); do curl -sf http://127.0.0.1:$port/health >/dev/null 2>&1 && break; sleep 1; done
}
serve_stop() { kill -INT $server 2>/dev/null; wait $server 2>/dev/null; }
bench() {  # tag, concurrency, num prompts, output len
  timeout 200 $b/bin/lathe bench serve --url http://127.0.0.1:$port --concurrency $2 --num-prompts $3 \
    --input-len 1024 --output-len $4 --tokenizer $tok --out $W/bench_$1.json >$W/bench_$1.txt 2>&1
  echo "$1 rc=$? $((SECONDS - t0))s" >>$S
}
for r in 1 2; do
  for bin in lathe_old lathe; do
    serve_start ${bin}_r$r $bin Qwen3-8B-FP8
    bench ttft_${bin}_r$r 1 16 2
    curl -s http://127.0.0.1:$port/metrics | grep -E '^lathe_time_to_first_token_seconds_(sum|count)' \
      >$W/metrics_ttft_${bin}_r$r.txt
    bench tpot_${bin}_r$r 1 8 256
    serve_stop
  done
done
for m in Qwen3-8B-FP8 Qwen3-8B; do
  for pin in 256 1024 2048 4096 8192; do
    LATHE_GEMM_PREFILL_PIN_M=$pin timeout 100 $b/bin/lathe bench latency configs/$m --load-format dummy \
      --device cuda --batch-sizes 1,16 --input-len 1024 --output-len 4 >$W/pin_${m}_$pin.txt 2>$W/pin_${m}_$pin.log
    echo "pin $m $pin rc=$? $((SECONDS - t0))s" >>$S
  done
done
for m in Qwen3-8B-FP8 Qwen3-8B; do
  for bs in 1 16; do
    LATHE_PROFILE=1 timeout 150 $b/bin/lathe bench latency configs/$m --load-format dummy --device cuda \
      --batch-sizes $bs --input-len 1024 --output-len 4 >$W/profile_${m}_b$bs.txt 2>&1
    echo "profile $m b$bs rc=$? $((SECONDS - t0))s" >>$S
  done
done
python3 - $W <<'PY' >>$S
import sys, json, glob, os
w = sys.argv[1]
print(f"{'run':24} {'TTFT p50':>9} {'TTFT avg':>9} {'TTFT p99':>9} {'TPOT p50':>9} {'ITL p50':>8} {'srv TTFT avg':>12}")
for bin in ("lathe_old", "lathe"):
    for r in (1, 2):
        row = f"{bin}_r{r}"
        try:
            t = json.load(open(f"{w}/bench_ttft_{row}.json"))["levels"][0]
            p = json.load(open(f"{w}/bench_tpot_{row}.json"))["levels"][0]
            m = dict(l.split() for l in open(f"{w}/metrics_ttft_{row}.txt"))
            srv = 1000 * float(m["lathe_time_to_first_token_seconds_sum"]) / float(m["lathe_time_to_first_token_seconds_count"])
            print(f"{row:24} {t['ttft_ms']['p50']:9.1f} {t['ttft_ms']['mean']:9.1f} {t['ttft_ms']['p99']:9.1f} "
                  f"{p['tpot_ms']['p50']:9.2f} {p['itl_ms']['p50']:8.2f} {srv:12.1f}")
        except Exception as e:
            print(f"{row:24} parse failed: {e!r}")
PY
echo "prefill ms at batch 1 / 16 (1024 tokens a sequence) by LATHE_GEMM_PREFILL_PIN_M" >>$S
for m in Qwen3-8B-FP8 Qwen3-8B; do
  for pin in 256 1024 2048 4096 8192; do
    printf '%-14s pin %5s %s\n' $m $pin "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s  ", $1, $2}' $W/pin_${m}_$pin.txt)" >>$S
  done
done
grep -h "gemm pin" $W/pin_Qwen3-8B-FP8_*.log $W/pin_Qwen3-8B_*.log | sed 's/.*gemm pin/gemm pin/' | sort -u >>$S
for f in $W/profile_*.txt; do
  echo "== $(basename $f)" >>$S
  grep -E '^ *[0-9]+ ' $f | head -2 >>$S
  sed -n '/prefill steps/,/^$/p' $f | head -40 >>$S
done
for pin in 256 1024 2048 4096 8192; do
  (( SECONDS - t0 > 540 )) && { echo "gemm test pin $pin skipped (time)" >>$S; continue; }
  filter='*PrefillPin*'; [[ $pin == 256 ]] && filter='*'
  LATHE_GEMM_PREFILL_PIN_M=$pin timeout 60 $b/bin/gpu_cuda_gemm_test --gtest_filter="$filter" >$W/gemm_test_$pin.txt 2>&1
  echo "gpu_cuda_gemm_test pin $pin rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $W/gemm_test_$pin.txt | tr '\n' ' ') $((SECONDS - t0))s" >>$S
done
cp $W/* $OUT/ 2>/dev/null
cat $S
