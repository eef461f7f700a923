#!/usr/bin/env bash
# Run THERE (device tool) from the repository root: the end-to-end performance session of
# docs/PERFORMANCE.md in one call. Needs a bundle built HERE with
#   scripts/device-bundle.sh --bundle perf-bundle --targets "lathe gpu_golden_qwen3" --with-tokenizer --gzip
# and carry ["perf-bundle"]. Each step has its own time limit, so one slow step does not cost the
# rest; logs and JSON go to $OUT and a short summary table is printed last.
#
# Usage: scripts/device-perf.sh [--steps "golden determinism quick evenattn early early32 earlykv slices attnslices fp8attn attnvariants attnbench envab attnprof gemvsweep nochain splitrule latency profile serve serve32 hf hf32 eager fp8kv latency32 wide"]
# (steps run in that order, most important first)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle=$root/perf-bundle
out=${OUT:-/tmp/lathe-perf-out}
mkdir -p "$out"
steps="golden determinism latency profile serve hf eager fp8kv latency32"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) steps=$2; shift ;;
  esac
  shift
done
has() { [[ " $steps " == *" $1 "* ]]; }
"$root/scripts/bundle-unpack.sh" "$bundle"  # bundles travel compressed (device-bundle.sh --gzip / --xz)
libdirs="/usr/local/cuda/lib64"
for d in $(python3 -c 'import nvidia.cublas as m, os; print(os.path.join(list(m.__path__)[0], "lib"))' 2>/dev/null); do
  libdirs="$libdirs:$d"
done
export LD_LIBRARY_PATH="$bundle/lib:$libdirs:${LD_LIBRARY_PATH:-}"
lathe=$bundle/bin/lathe
tok=$bundle/tokenizer
summary=$out/summary.txt
: >"$summary"
note() { printf '%-44s %s\n' "$1" "$2" >>"$summary"; }
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
  echo "bundle commit: $(cat "$bundle/COMMIT" 2>/dev/null)"
  "$lathe" info
} >"$out/device.txt" 2>&1
cat "$out/device.txt" >>"$summary"

latency() {  # name, timeout, model dir, extra flags...
  local name=$1 limit=$2 model=$3
  shift 3
  local start=$SECONDS
  timeout "$limit" "$lathe" bench latency "$model" --load-format dummy --device cuda --input-len 1024 \
    --out "$out/$name.json" "$@" >"$out/$name.txt" 2>"$out/$name.log"
  local rc=$?
  note "latency $name" "rc=$rc $((SECONDS - start))s"
  sed -n '/^decode graphs/p;/^ *batch/,/^decode_p50/p' "$out/$name.txt" | head -8 >>"$summary"
}

sdpa_peer() {  # dir: the PyTorch SDPA peer on contiguous KV into dir/sdpa.csv, unless ATTN_NO_SDPA=1
  [[ -n "${ATTN_NO_SDPA:-}" ]] && return
  local start=$SECONDS
  PYTHONUNBUFFERED=1 timeout 120 python3 "$root/tools/peers/sdpa_decode.py" --out "$1/sdpa.csv" >"$1/sdpa.log" 2>&1
  note "sdpa_decode.py" "rc=$? $((SECONDS - start))s"
}

if has golden; then
  # Binaries built in another checkout find the fixtures of this one. Each binary runs as
  # GOLDEN_SHARDS gtest shards side by side (default 4: the suites spend most of their time in
  # CPU references, and the machine has 16 cores; gpu_attention took 359 s unsharded in session 12),
  # each shard with GOLDEN_TIMEOUT seconds (default 480). The summary sums the shards.
  export LATHE_FIXTURES_DIR=$root/tests/fixtures LATHE_SOURCE_DIR=$root
  shards=${GOLDEN_SHARDS:-4}
  for bin in "$bundle"/bin/gpu_*; do
    [[ -x "$bin" ]] || continue
    name=$(basename "$bin")
    start=$SECONDS
    result=$("$root/scripts/gtest-shards.sh" "$bin" "$shards" "${GOLDEN_TIMEOUT:-480}" "$out/$name.log")
    note "$name" "${result/ passed/ $((SECONDS - start))s passed}"
    grep -E "^\[  FAILED  \]" "$out/$name.log" | head -8 >>"$summary"
  done
  grep -E "decode graphs" "$out/gpu_golden_qwen3.log" | head -3 >>"$summary"
fi
if has quick; then
  latency quick_8b_fp8 90 configs/Qwen3-8B-FP8 --batch-sizes 1,16 --output-len 32
fi
if has evenattn; then
  # The opt-in equal-split rule through every attention test (determinism, split vs non-split).
  start=$SECONDS
  LATHE_FIXTURES_DIR=$root/tests/fixtures LATHE_ATTN_SPLIT_RULE=even timeout 120 "$bundle/bin/gpu_attention" \
    >"$out/gpu_attention_even.log" 2>&1
  note "gpu_attention (LATHE_ATTN_SPLIT_RULE=even)" "rc=$? $((SECONDS - start))s $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/gpu_attention_even.log" | tr '\n' ' ')"
fi
if has early; then
  # Decode GEMV weights requested before the chained-launch wait (LATHE_GEMV_EARLY_WEIGHTS):
  # off, the ring's first steps, and 16 more steps into L2; two rounds so drift shows.
  for round in 1 2; do
    for e in off on 16; do
      LATHE_GEMV_EARLY_WEIGHTS=$e latency "early_8b_fp8_${e}_r$round" 90 configs/Qwen3-8B-FP8 \
        --batch-sizes 1,4,16 --output-len 32
    done
  done
  for e in off on 16; do
    LATHE_GEMV_EARLY_WEIGHTS=$e latency "early_32b_fp8_$e" 120 configs/Qwen3-32B-FP8 --batch-sizes 1,16 --output-len 32
    LATHE_GEMV_EARLY_WEIGHTS=$e latency "early_8b_bf16_$e" 90 configs/Qwen3-8B --batch-sizes 1,16 --output-len 32
  done
fi
if has early32; then
  # Qwen3-32B-FP8 at batch 4 and 16 with and without the early weight reads, alternated.
  for round in 1 2; do
    for e in off on; do
      LATHE_GEMV_EARLY_WEIGHTS=$e latency "early32_${e}_r$round" 90 configs/Qwen3-32B-FP8 --batch-sizes 4,16 --output-len 32
    done
  done
fi
if has earlykv; then
  # Split-K attention copying its first K/V tiles before the chained-launch wait (LATHE_ATTN_EARLY_KV)
  # or after it: the decode step at 1k (batch 1, 4, 16) and 16k context (batch 1), two rounds.
  for round in 1 2; do
    for e in on off; do
      LATHE_ATTN_EARLY_KV=$e latency "earlykv_${e}_in1k_r$round" 90 configs/Qwen3-8B-FP8 --batch-sizes 1,4,16 --output-len 32
      LATHE_ATTN_EARLY_KV=$e timeout 90 "$lathe" bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
        --input-len 16384 --batch-sizes 1 --output-len 32 --out "$out/earlykv_${e}_in16k_r$round.json" \
        >"$out/earlykv_${e}_in16k_r$round.txt" 2>&1
      note "latency earlykv_${e}_in16k_r$round" "$(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms", $1, $4}' "$out/earlykv_${e}_in16k_r$round.txt")"
    done
  done
fi
if has slices; then
  # Split slices (LATHE_ATTN_DECODE_SPLIT_SLICES, attn_decode_split_slices): more CTAs per split at
  # narrow batches; variant 5 gives every slice its own CTA, variant 12 lets a CTA run a split's
  # slices in turn when the grid would exceed two CTAs per SM. Decode step at 1k (batch 1, 4, 16)
  # and 16k / 32k (batch 1) for the 8B shape (9 splits, 3 slices), 16k for 32B (5 splits, 6 slices).
  for cfg in ${SLICES_CONFIGS:-off:5 auto:5 auto:12}; do
    s=${cfg%:*} k=${cfg#*:}
    LATHE_ATTN_DECODE_SPLIT_SLICES=$s LATHE_ATTN_SPLITK_KERNEL=$k latency "slices_${s}_k${k}_in1k" 90 \
      configs/Qwen3-8B-FP8 --batch-sizes 1,4,16 --output-len 32
    for m in 8b:Qwen3-8B-FP8:16384 8b:Qwen3-8B-FP8:32768 32b:Qwen3-32B-FP8:16384; do
      IFS=: read -r tag model ctx <<<"$m"
      name="slices_${s}_k${k}_${tag}_in$ctx"
      LATHE_ATTN_DECODE_SPLIT_SLICES=$s LATHE_ATTN_SPLITK_KERNEL=$k timeout 120 "$lathe" bench latency \
        "configs/$model" --load-format dummy --device cuda --input-len "$ctx" --batch-sizes 1 --output-len 32 \
        --out "$out/$name.json" >"$out/$name.txt" 2>&1
      note "latency $name" "$(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms", $1, $4}' "$out/$name.txt")"
    done
  done
fi
if has attnslices; then
  # Kernel benchmark of the split-K attention with and without split slices, variants 5 and 12.
  if [[ -x "$bundle/bin/lathe_bench_attention" ]]; then
    mkdir -p "$out/attn"
    timeout 300 "$bundle/bin/lathe_bench_attention" --out "$out/attn" --kernels 5,12 \
      --policies auto+pack,auto+pack+slices --batches 1,2,4,16,64 >"$out/attn/bench.txt" 2>&1
    note "lathe_bench_attention slices" "rc=$?"
  fi
fi
if has fp8attn; then
  # FP8 KV split-K attention: the kernel benchmark of this bundle beside a baseline binary
  # (bin/lathe_bench_attention_base, when the bundle carries one) in the same call, then 8B-FP8
  # decode steps at 16k (batch 1 and 16) and 32k (batch 1) (FP8ATTN_RUNS "context:batches ...")
  # for each KV dtype in FP8ATTN_KV (default "bf16 fp8"), with this bundle's lathe and, when
  # carried, bin/lathe_base.
  mkdir -p "$out/attn"
  for b in lathe_bench_attention lathe_bench_attention_base; do
    [[ -x "$bundle/bin/$b" ]] || continue
    timeout 240 "$bundle/bin/$b" --out "$out/attn/$b" --kernels 5 --policies auto+pack,auto+pack+slices \
      --batches "${FP8ATTN_BATCHES:-1,16,64}" ${FP8ATTN_BENCH_ARGS:-} >"$out/attn/$b.txt" 2>&1
    note "$b fp8attn" "rc=$?"
  done
  for bin in lathe lathe_base; do
    [[ -x "$bundle/bin/$bin" ]] || continue
    for kv in ${FP8ATTN_KV:-bf16 fp8}; do
      for run in ${FP8ATTN_RUNS:-16384:1,16 32768:1}; do
        ctx=${run%:*} batches=${run#*:}
        name="fp8attn_${bin}_kv${kv}_in$ctx"
        timeout 150 "$bundle/bin/$bin" bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
          --input-len "$ctx" --batch-sizes "$batches" --output-len 32 --kv-cache-dtype "$kv" \
          $([[ $kv == fp8 ]] && echo --calculate-kv-scales) --out "$out/$name.json" >"$out/$name.txt" 2>&1
        note "latency $name" "$(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' "$out/$name.txt")"
      done
    done
  done
fi
if has attnvariants; then
  # Split-K kernel variants (ATTN_VARIANTS, default "6") beside the default: the split-K GPU tests
  # under each of ATTN_VARIANT_TESTS (default: every listed variant; LATHE_ATTN_SPLITK_KERNEL; less
  # Prefill and GqaPacked, which take no split-K launch) with a memcheck of every arm at each head
  # dim, then one benchmark process over the default and every listed variant (auto+pack;
  # ATTN_VARIANT_BATCHES, default 1,4,16,64), the PyTorch SDPA peer on contiguous KV
  # (tools/peers/sdpa_decode.py; ATTN_NO_SDPA=1 skips it) and, with ATTN_VARIANT_STEPS
  # ("context:batches ..."), Qwen3-8B-FP8 decode steps under the default and each variant.
  variants=${ATTN_VARIANTS:-6}
  export LATHE_FIXTURES_DIR=$root/tests/fixtures
  command -v compute-sanitizer >/dev/null || export PATH="$PATH:/usr/local/cuda/bin"
  every_arm=Shapes/DecodeArms.EveryArmMatchesTheReference
  memcheck_cases="$every_arm/*nq32_nkv8_hd128:$every_arm/*nq24_nkv4_hd256:$every_arm/*nq16_nkv2_hd64"
  for v in ${ATTN_VARIANT_TESTS-$variants}; do
    start=$SECONDS
    LATHE_ATTN_SPLITK_KERNEL=$v timeout "${ATTN_VARIANT_TEST_TIMEOUT:-200}" "$bundle/bin/gpu_attention" --gtest_filter='-Shapes/Prefill.*:GqaPacked.*' \
      >"$out/gpu_attention_k$v.log" 2>&1
    note "gpu_attention split tests, kernel $v" "rc=$? $((SECONDS - start))s $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/gpu_attention_k$v.log" | tr '\n' ' ')"
    grep -E "^\[  FAILED  \]" "$out/gpu_attention_k$v.log" | head -8 >>"$summary"
    if command -v compute-sanitizer >/dev/null; then
      start=$SECONDS
      LATHE_ATTN_SPLITK_KERNEL=$v timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$bundle/bin/gpu_attention" --gtest_filter="$memcheck_cases" \
        >"$out/memcheck_k$v.log" 2>&1
      note "memcheck DecodeArms, kernel $v" "rc=$? $((SECONDS - start))s $(grep -E 'ERROR SUMMARY' "$out/memcheck_k$v.log" | head -1)"
    fi
  done
  mkdir -p "$out/attnvar"
  start=$SECONDS
  timeout 300 "$bundle/bin/lathe_bench_attention" --out "$out/attnvar" --kernels "5,${variants// /,}" \
    --policies auto+pack --batches "${ATTN_VARIANT_BATCHES:-1,4,16,64}" >"$out/attnvar/bench.txt" 2>&1
  note "lathe_bench_attention kernels 5 $variants" "rc=$? $((SECONDS - start))s"
  sdpa_peer "$out/attnvar"
  # Qwen3-8B-FP8 decode steps (BF16 KV) under the default and each variant, if the bundle has lathe.
  if [[ -x "$lathe" && -n "${ATTN_VARIANT_STEPS:-}" ]]; then
    for v in 5 $variants; do
      for run in $ATTN_VARIANT_STEPS; do
        ctx=${run%:*} batches=${run#*:}
        name="attnvar_k${v}_in$ctx"
        LATHE_ATTN_SPLITK_KERNEL=$v timeout 150 "$lathe" bench latency configs/Qwen3-8B-FP8 --load-format dummy \
          --device cuda --input-len "$ctx" --batch-sizes "$batches" --output-len 32 --out "$out/$name.json" \
          >"$out/$name.txt" 2>"$out/$name.log"
        note "latency $name" "$(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' "$out/$name.txt")"
      done
    done
  fi
fi
if has attnbench; then
  # The attention kernel benchmark with ATTN_BENCH_ARGS (e.g. "--kernels serve,5 --policies
  # auto+pack --batches 1,4,16,64 --tables sequential"), then the SDPA peer unless ATTN_NO_SDPA=1,
  # in $OUT/attnbench.
  mkdir -p "$out/attnbench"
  start=$SECONDS
  # shellcheck disable=SC2086  # word splitting of the argument list is intended
  timeout 300 "$bundle/bin/lathe_bench_attention" --out "$out/attnbench" ${ATTN_BENCH_ARGS:-} \
    >"$out/attnbench/bench.txt" 2>&1
  note "lathe_bench_attention ${ATTN_BENCH_ARGS:-}" "rc=$? $((SECONDS - start))s"
  sdpa_peer "$out/attnbench"
fi
if has envab; then
  # Decode-step A/B of one environment lever: ENVAB_VAR set to each of ENVAB_VALUES (default
  # "off on") in turn, ENVAB_ROUNDS rounds (default 2, interleaved so drift shows), Qwen3-8B-FP8
  # (ENVAB_MODEL) at each ENVAB_STEPS entry ("context:batches ...", default "1024:1,4,16,64").
  for round in $(seq 1 "${ENVAB_ROUNDS:-2}"); do
    for value in ${ENVAB_VALUES:-off on}; do
      for run in ${ENVAB_STEPS:-1024:1,4,16,64}; do
        ctx=${run%:*} batches=${run#*:}
        name="envab_${value}_in${ctx}_r$round"
        env "$ENVAB_VAR=$value" timeout 150 "$lathe" bench latency "${ENVAB_MODEL:-configs/Qwen3-8B-FP8}" \
          --load-format dummy --device cuda --input-len "$ctx" --batch-sizes "$batches" --output-len 32 \
          --out "$out/$name.json" >"$out/$name.txt" 2>"$out/$name.log"
        note "latency $ENVAB_VAR=$name" "$(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' "$out/$name.txt")"
      done
    done
  done
fi
if has attnprof; then
  # Nsight Compute on single split-K attention launches (the split kernel and its reduce) of the
  # kernel benchmark: ATTNPROF_CASES "dtype:batch:context ..." on shape ATTNPROF_SHAPE (default
  # 32/8/128), split-K variant ATTNPROF_KERNEL (default 14, the wide serve geometry), auto+pack.
  # Headline counters and warp stall reasons go to the summary, the split kernel's most-stalled
  # SASS (bench/kernels/sass_stalls.py) to $OUT/attnprof_*.
  command -v ncu >/dev/null || export PATH="$PATH:/usr/local/cuda/bin:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)"
  stalls=""
  for r in barrier branch_resolving dispatch_stall drain imc_miss lg_throttle long_scoreboard math_pipe_throttle \
    membar mio_throttle misc no_instruction not_selected selected short_scoreboard sleeping tex_throttle wait; do
    stalls+="${stalls:+,}smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
  done
  for c in ${ATTNPROF_CASES:-bf16:1:16384 fp8:1:16384 bf16:16:4096}; do
    IFS=: read -r dt b ctx <<<"$c"
    tag="attnprof_${dt}_b${b}_l$ctx"
    start=$SECONDS
    timeout 150 ncu --clock-control none --set full --metrics "$stalls" --kernel-name-base demangled \
      -k regex:splitk -s 2 -c 2 --export "$out/$tag" "$bundle/bin/lathe_bench_attention" --kernels "${ATTNPROF_KERNEL:-14}" \
      --policies auto+pack --shapes "${ATTNPROF_SHAPE:-32/8/128}" --dtypes "$dt" --batches "$b" --contexts "$ctx" \
      >"$out/$tag.txt" 2>&1
    note "ncu $tag" "rc=$? $((SECONDS - start))s"
    # --export writes the report only; its details page holds the headline counters.
    ncu --import "$out/$tag.ncu-rep" --page details >>"$out/$tag.txt" 2>&1
    grep -E "^  [a-zA-Z_0-9:]+.*\(|^    (Duration|DRAM Throughput|Issue Slots Busy|Achieved Occupancy|Registers Per Thread|Warp Cycles Per Issued Instruction|Eligible Warps Per Scheduler|L2 Hit Rate|Grid Size|Block Size) " \
      "$out/$tag.txt" | cut -c1-120 >>"$summary"
    grep -E "issue_stalled_" "$out/$tag.txt" | awk '$NF + 0 >= 0.5 { sub(/smsp__average_warps_issue_stalled_/, "stall "); print }' \
      | head -16 >>"$summary"
    ncu --import "$out/$tag.ncu-rep" --page source --print-source sass --csv -k regex:splitk_mma >"$out/${tag}_sass.csv" 2>&1
    python3 "$root/bench/kernels/sass_stalls.py" "$out/${tag}_sass.csv" --top 25 >"$out/${tag}_sass_top.txt" 2>&1
    rm -f "$out/$tag.ncu-rep"
  done
fi
if has gemvsweep; then
  # Decode GEMV variants (GEMV_VARIANTS, default "auto,auto:b3") side by side on the Qwen3 decode
  # shapes (lathe_bench_kernels --variants, cuBLASLt/cuBLAS beside them), after the tier-equality
  # test under each variant; the summary gets the weighted geometric mean of % of the read ceiling
  # per (variant, dtype) (m = 1 counted twice, m = 4 and 16 once; bench/kernels/device_run.sh's score).
  variants=${GEMV_VARIANTS:-auto,auto:b3}
  for v in ${variants//,/ }; do
    start=$SECONDS
    LATHE_GEMV_TEST_VARIANT_FP8=$v LATHE_GEMV_TEST_VARIANT_BF16=$v timeout 90 "$bundle/bin/gpu_cuda_gemv_test" \
      >"$out/gemv_test_${v//:/_}.log" 2>&1
    note "gpu_cuda_gemv_test ($v)" "rc=$? $((SECONDS - start))s $(grep -E '^\[  (PASSED|FAILED)  \]' "$out/gemv_test_${v//:/_}.log" | tr '\n' ' ')"
  done
  # Twice: back to back (each GEMV after itself) and in context (--after-norm: each GEMV after the
  # norm that writes its x, the order of a decode step; session 15 found the two rankings differ).
  for mode in back context; do
    file=$out/gemv_variants.txt flags=""
    [[ $mode == context ]] && file=$out/gemv_variants_in_context.txt flags="--after-norm --no-peers"
    start=$SECONDS
    # shellcheck disable=SC2086
    timeout 200 "$bundle/bin/lathe_bench_kernels" --variants --shapes decode --variant-list "$variants" $flags \
      >"$file" 2>&1
    note "lathe_bench_kernels --variants $variants ($mode)" "rc=$? $((SECONDS - start))s"
    for v in ${variants//,/ }; do
      for dt in fp8 bf16; do
        note "  score $v $dt ($mode)" "$(awk -v dt="$dt" -v nm="v:$v" '$5 == dt && $7 == nm { pct = $NF; sub(/%/, "", pct)
            w = ($6 == 1) ? 2 : 1; if (pct > 0) { s += w * log(pct); n += w } }
          END { printf "%.2f%% (%d rows)", (n > 0 ? exp(s / n) : 0), n }' "$file")"
      done
    done
  done
fi
if has nochain; then
  # The same quick measurement with chained launches (programmatic dependent launch) off.
  LATHE_CHAINED_LAUNCH=off latency nochain_8b_fp8 90 configs/Qwen3-8B-FP8 --batch-sizes 1,16 --output-len 32
fi
if has splitrule; then
  # The split-K rule and floor (LATHE_ATTN_SPLIT_RULE, LATHE_ATTN_MIN_KV_PER_SPLIT) at 1k context:
  # the 9-split 8B shapes and the 5-split 32B shapes answer differently (docs/PERFORMANCE.md).
  for rule in seed even; do
    for floor in 128 256 512; do
      LATHE_ATTN_SPLIT_RULE=$rule LATHE_ATTN_MIN_KV_PER_SPLIT=$floor latency "split_8b_fp8_${rule}_$floor" 90 \
        configs/Qwen3-8B-FP8 --batch-sizes 1,4,16,64 --output-len 32
    done
    for floor in 128 256; do
      LATHE_ATTN_SPLIT_RULE=$rule LATHE_ATTN_MIN_KV_PER_SPLIT=$floor latency "split_32b_fp8_${rule}_$floor" 120 \
        configs/Qwen3-32B-FP8 --batch-sizes 1,16,64 --output-len 32
    done
  done
fi
if has latency; then
  latency latency_8b_fp8 120 configs/Qwen3-8B-FP8 --batch-sizes 1,4,16,64 --output-len 64
  latency latency_8b_bf16 120 configs/Qwen3-8B --batch-sizes 1,4,16,64 --output-len 64
fi
if has profile; then
  start=$SECONDS
  LATHE_PROFILE=1 timeout 90 "$lathe" bench latency configs/Qwen3-8B-FP8 --load-format dummy --device cuda \
    --batch-sizes 1,16 --input-len 1024 --output-len 32 >"$out/profile_8b_fp8.txt" 2>"$out/profile_8b_fp8.log"
  note "profile 8b fp8 (eager)" "rc=$? $((SECONDS - start))s"
fi
# Starts `lathe serve` of a dummy model on a port (extra flags after the name) and waits for
# /health; sets $server to its pid.
serve_start() {  # model dir, port, served name, extra flags...
  local model=$1 port=$2 name=$3
  shift 3
  local start=$SECONDS
  "$lathe" serve "$model" --load-format dummy --tokenizer "$tok" --device cuda --port "$port" \
    --max-model-len "${MAX_MODEL_LEN:-4096}" --max-num-seqs 64 --served-model-name "$name" "$@" \
    >"$out/serve_$name.log" 2>&1 &
  server=$!
  for _ in $(seq 1 180); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    sleep 1
  done
  note "serve $name ready" "$((SECONDS - start))s: $(grep -E 'start-up took|decode graphs' "$out/serve_$name.log" | tr '\n' ' ' | cut -c1-200)"
}
serve_stop() {
  kill -INT "$server" 2>/dev/null
  wait "$server" 2>/dev/null
}
# Batch invariance of a served model: alone vs beside `others` requests (others + 1 in flight);
# extra flags go to the tool (--watched-len, --save, --expect).
determinism() {  # port, served name, others, extra tool flags...
  local start=$SECONDS port=$1 name=$2 others=$3
  shift 3
  timeout 150 python3 tools/serve_determinism_check.py --url "http://127.0.0.1:$port" --model "$name" \
    --others "$others" "$@" >"$out/determinism_$name.txt" 2>&1
  note "determinism $name ($(( others + 1 )) in flight)" "rc=$? $((SECONDS - start))s"
  grep -E "IDENTICAL|DIFFERENT|determinism:" "$out/determinism_$name.txt" >>"$summary"
}
bench_serve() {  # port, served name, time limit
  local start=$SECONDS
  timeout "$3" "$lathe" bench serve --url "http://127.0.0.1:$1" --concurrency 1,4,16,64 --input-len 1024 \
    --output-len 256 --tokenizer "$tok" --out "$out/serve_$2.json" --plot "$out/serve_$2.svg" \
    >"$out/serve_bench_$2.txt" 2>&1
  note "bench serve $2" "rc=$? $((SECONDS - start))s"
  tail -8 "$out/serve_bench_$2.txt" >>"$summary"
}

if has determinism; then
  # Decode graphs on, 32 requests in flight at most: every decode step stays on the GEMV tiers.
  # The watched prompt (150 tokens) is one prefill chunk here.
  serve_start configs/Qwen3-8B-FP8 8011 det-8b-fp8
  determinism 8011 det-8b-fp8 31 --watched-len 150 --save "$out/det_alone.json"
  serve_stop
  # The same under a KV pool far too small for the crowd (64 blocks of 16 tokens: preemptions, then replay) and a
  # 64-token step budget (the watched prompt is prefilled in 64-token chunks, cut differently in
  # the crowd); its alone outputs must also equal the first server's.
  MAX_MODEL_LEN=512 serve_start configs/Qwen3-8B-FP8 8015 det-preempt --num-kv-blocks 64 --block-size 16 \
    --max-num-batched-tokens 64
  determinism 8015 det-preempt 31 --watched-len 150 --expect "$out/det_alone.json"
  curl -s http://127.0.0.1:8015/metrics | grep -E '^lathe_(preemptions|num_preemptions)' >>"$summary"
  serve_stop
fi
if has serve; then
  serve_start configs/Qwen3-8B-FP8 8012 qwen3-8b-fp8
  bench_serve 8012 qwen3-8b-fp8 240
  serve_stop
fi
if has serve32; then
  serve_start configs/Qwen3-32B-FP8 8014 qwen3-32b-fp8
  bench_serve 8014 qwen3-32b-fp8 300
  serve_stop
fi
# Hugging Face transformers, static cache + torch.compile, on the BF16 shape of a config dir.
# torch.compile per batch size took up to ~100 s (8B) and ~150 s (32B) on the H200 here.
hf_peer() {  # label, model dir, time limit
  local start=$SECONDS
  timeout "$3" python3 tools/peers/hf_generate.py "$2" --batch-sizes 1,4,16 --prompt-len 1024 \
    --new-tokens 32 --modes static-compiled --repeats 3 --out "$out/hf_$1.json" >"$out/hf_$1.txt" 2>&1
  note "hf peer $1 static-compiled" "rc=$? $((SECONDS - start))s"
  tail -5 "$out/hf_$1.txt" >>"$summary"
}
if has hf; then
  hf_peer 8b configs/Qwen3-8B 330
fi
if has hf32; then
  hf_peer 32b configs/Qwen3-32B 480
fi
if has eager; then
  latency eager_8b_fp8 90 configs/Qwen3-8B-FP8 --batch-sizes 1,16 --output-len 32 --enforce-eager
fi
if has fp8kv; then
  latency fp8kv_8b_fp8 90 configs/Qwen3-8B-FP8 --batch-sizes 1,16 --output-len 32 --kv-cache-dtype fp8 \
    --calculate-kv-scales
fi
if has latency32; then
  latency latency_32b_fp8 150 configs/Qwen3-32B-FP8 --batch-sizes 1,4,16,64 --output-len 32
  latency latency_32b_bf16 150 configs/Qwen3-32B --batch-sizes 1,4,16,64 --output-len 32
fi
if has wide; then
  # LATHE_FFN_DECODE_WIDE=gemv: decode steps wider than 32 rows on the GEMV tiers in 32-row chunks.
  LATHE_FFN_DECODE_WIDE=gemv latency wide_8b_fp8 90 configs/Qwen3-8B-FP8 --batch-sizes 16,64 --output-len 32
  LATHE_FFN_DECODE_WIDE=gemv serve_start configs/Qwen3-8B-FP8 8013 wide
  determinism 8013 wide 47
  serve_stop
fi
echo
cat "$summary"
# The device tool returns a handful of files: pack everything into one archive beside the summary.
cp "$summary" /tmp/device-perf-summary.txt
tar czf /tmp/device-perf.tgz -C "$out" . && find "$out" -mindepth 1 -delete &&
  mv /tmp/device-perf.tgz /tmp/device-perf-summary.txt "$out/"
