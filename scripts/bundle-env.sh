# Sourced (not run) by a device run script at the repository root on the device machine:
#   source scripts/bundle-env.sh BUNDLE_DIR
# Unpacks the bundle (scripts/bundle-unpack.sh), points the loader at its libraries and the tests
# at the fixtures, and sets b (the bundle's absolute path), S ($OUT/summary.txt, begun with the
# bundle's commit and the GPU's name, driver and clock), W ($OUT/work, emptied) and t0 for the
# script, and defines gpu_suite, step_latency, step_arm, decode_suites, fp8_table, variant_rows,
# auto_rows, attn_bench, slice_sweep, issue5_tables, declared_issue5_tables, floor_sweep,
# slice_floor_ab and auto2_targets (below).
b=$(cd "${1:?usage: source scripts/bundle-env.sh BUNDLE_DIR}" && pwd)
scripts/bundle-unpack.sh "$b" || echo "bundle-env: unpack of $b failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
export LATHE_FIXTURES_DIR=$PWD/tests/fixtures LATHE_SOURCE_DIR=$PWD
S=$OUT/summary.txt
W=$OUT/work
rm -rf "$W"
mkdir -p "$W"
echo "commit $(cat "$b/COMMIT")" >"$S"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>"$S" 2>&1
t0=$SECONDS

# gpu_suite TAG BINARY [VAR=VALUE...] [ARG...]: runs the bundle's gtest BINARY on the GPU under
# those variables and with those arguments (e.g. --gtest_filter=...; SUITE_TIMEOUT s at most,
# default 240), its output in $W/TAG.txt; appends its exit status, verdict, the number of tests
# that passed (`ok=N`: how far a suite cut off by the timeout got) and the elapsed seconds to $S,
# then its first failures.
gpu_suite() {
  local tag=$1 bin=$2 a rc
  local -a vars=() args=()
  shift 2
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; then vars+=("$a"); else args+=("$a"); fi
  done
  env LATHE_TEST_DEVICE=cuda "${vars[@]}" timeout "${SUITE_TIMEOUT:-240}" "$b/bin/$bin" "${args[@]}" >"$W/$tag.txt" 2>&1
  rc=$?
  echo "$tag rc=$rc $(grep -E '^\[  (PASSED|FAILED) ' "$W/$tag.txt" | tr '\n' ' ')ok=$(grep -c '^\[       OK \]' "$W/$tag.txt") $((SECONDS - t0))s" >>"$S"
  grep -E '^\[  FAILED  \]|Failure' "$W/$tag.txt" | head -10 >>"$S"
}

# step_latency TAG MODEL_CONFIG OVERRIDES: one `lathe bench latency` of configs/MODEL_CONFIG (dummy
# weights, 1k context, batch sizes $BATCHES (default 1,4,16,32), 32 tokens; 120 s at most) with
# LATHE_GEMV_SHAPE_VARIANTS set to OVERRIDES (empty: the defaults), its output in
# $W/latency_TAG.txt; appends the step times to $S.
step_latency() {
  local f=$W/latency_$1.txt
  env LATHE_GEMV_SHAPE_VARIANTS="$3" timeout 120 "$b/bin/lathe" bench latency "configs/$2" --load-format dummy \
    --device cuda --input-len 1024 --batch-sizes "${BATCHES:-1,4,16,32}" --output-len 32 \
    --out "$W/latency_$1.json" >"$f" 2>&1
  echo "latency $1 rc=$? $(awk '$1 ~ /^[0-9]+$/ {printf "B%s %s ms  ", $1, $4}' "$f") $((SECONDS - t0))s" >>"$S"
}

# decode_suites: gpu_suite over the suites a decode-path change must pass: the GEMV tiers (with the
# SwiGLU, fused-norm and QK-norm/RoPE epilogues), the CUDA ops, batch invariance, the golden outputs.
decode_suites() {
  gpu_suite gemv gpu_cuda_gemv_test
  gpu_suite op gpu_cuda_op_test
  gpu_suite invariance gpu_batch_invariance
  gpu_suite golden gpu_golden_qwen3
}

# fp8_table: the fp8 decode-width table (`lathe_bench_kernels --only qwen3- --widths 1,4,16 --dtype
# fp8`: the read ceiling and cuBLASLt FP8 in the same process; 60 s at most) into $OUT/table_fp8.txt,
# its summary appended to $S.
fp8_table() {
  timeout 60 "$b/bin/lathe_bench_kernels" --only qwen3- --widths 1,4,16 --dtype fp8 >"$OUT/table_fp8.txt" 2>&1
  echo "table fp8 rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' "$OUT/table_fp8.txt" | head -1 | cut -c1-60)" >>"$S"
  sed -n '/^summary/,$p' "$OUT/table_fp8.txt" >>"$S"
}

# variant_rows SHAPE VARIANTS WIDTHS: fp8 kernel timings of the shapes matching SHAPE under each of
# VARIANTS (comma-separated) at WIDTHS, no peers (60 s at most), into $W/variants_SHAPE.txt; appends
# one line per shape, width and variant (% of the read ceiling last) to $S.
variant_rows() {
  local f=$W/variants_${1//\//_}.txt
  timeout 60 "$b/bin/lathe_bench_kernels" --variants --variant-list "$2" --only "$1" --dtype fp8 --widths "$3" \
    --no-peers >"$f" 2>&1
  echo "== $1 rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' "$f" | head -1 | cut -c1-40)" >>"$S"
  grep -hE " v:" "$f" | awk '{print $1, $2, $6, $7, $8, $(NF-1), $NF}' >>"$S"
}

# auto_rows TAG MODEL WIDTHS [VAR=VALUE...]: `auto`'s fp8 kernel timings of the shapes matching
# MODEL (e.g. qwen3-8b) at WIDTHS, no peers, under those variables (60 s at most), into
# $W/rows_MODEL_TAG.txt; appends a header line and one line per shape and width (% of the read
# ceiling last) to $S.
auto_rows() {
  local tag=$1 model=$2 widths=$3
  shift 3
  local f=$W/rows_${model}_$tag.txt
  env "$@" timeout 60 "$b/bin/lathe_bench_kernels" --variants --variant-list auto --only "$model" --dtype fp8 \
    --widths "$widths" --no-peers >"$f" 2>&1
  echo "== $model $tag rc=$? $((SECONDS - t0))s $(grep -h 'read ceiling' "$f" | head -1 | cut -c1-40)" >>"$S"
  grep -hE " v:" "$f" | awk '{print $1, $2, $6, $7, $8, $(NF-1), $NF}' >>"$S"
}

# step_arm TAG MODEL_CONFIG OVERRIDES: step_latency, started only while the script's elapsed time
# is under LIMIT seconds (default 400), so a run's last arms give way to the device tool's limit.
step_arm() {
  (( SECONDS - t0 < ${LIMIT:-400} )) && step_latency "$@"
}

# attn_bench TAG DIR SECONDS BENCH_ARGS...: one lathe_bench_attention process (at most SECONDS,
# under the caller's environment prefix, e.g. LATHE_ATTN_MIN_KV_PER_SPLIT=256 attn_bench ...) writing
# into DIR (created), its output in DIR/bench.txt; appends "== TAG", its verdict, the elapsed seconds
# and the read ceiling to $S.
attn_bench() {
  local tag=$1 dir=$2 seconds=$3
  shift 3
  mkdir -p "$dir"
  timeout "$seconds" "$b/bin/lathe_bench_attention" --out "$dir" "$@" >"$dir/bench.txt" 2>&1
  echo "== $tag rc=$? $((SECONDS - t0))s $(grep -h 'ceiling' "$dir/bench.txt" | head -1 | cut -c1-60)" >>"$S"
}

# slice_sweep: the batch-1 split slices of the three serve geometries, both KV dtypes, pinned caps
# 1 / 2 / 3 / 4 / 6 at 2k-64k, with the slice floor lowered to 64 positions so that each pinned
# count is what runs, in two processes (150 s at most each), into $W/sweep_r1 and $W/sweep_r2;
# appends each run's verdict, elapsed seconds and read ceiling to $S.
slice_sweep() {
  local r
  for r in 1 2; do
    LATHE_ATTN_MIN_KV_PER_SLICE=64 attn_bench "sweep r$r" "$W/sweep_r$r" 150 --kernels serve \
      --policies auto+pack+slices --slices 1,2,3,4,6 --batches 1 --contexts 2048,4096,8192,16384,32768,65536
  done
}

# issue5_tables B1_BF16 B1_FP8 [BENCH_ARGS...]: the issue-5 targets tables: the serve kernels under
# auto+pack and auto+pack+slices (BENCH_ARGS added, e.g. --slices auto:2; 200 s at most) into
# $W/serve, PyTorch SDPA in the same call into $W/sdpa.csv (90 s at most), and
# bench/attention/targets.py per KV dtype with batch 1 from the policy B1_<dtype> into
# $W/targets_<dtype>.txt; appends each step's verdict and the three counts per dtype to $S.
issue5_tables() {
  local b1_bf16=$1 b1_fp8=$2 kv b1
  shift 2
  attn_bench serve "$W/serve" 200 --kernels serve --policies auto+pack,auto+pack+slices "$@"
  PYTHONUNBUFFERED=1 timeout 90 python3 tools/peers/sdpa_decode.py --out "$W/sdpa.csv" >"$W/sdpa.log" 2>&1
  echo "== sdpa rc=$? $((SECONDS - t0))s" >>"$S"
  for kv in bf16 fp8; do
    b1=b1_$kv
    python3 bench/attention/targets.py "$W/serve/attention_bench.csv" "$W/sdpa.csv" --policy auto+pack \
      --b1-policy "${!b1}" --kv $kv >"$W/targets_$kv.txt" 2>&1
    echo "== targets $kv auto+pack (batch 1: ${!b1})" >>"$S"
    tail -3 "$W/targets_$kv.txt" >>"$S"
  done
}

# declared_issue5_tables [BENCH_ARGS...]: issue5_tables with batch 1 as the GPU's target declares it
# (targets/*.toml, attn_decode_split_slices): on an H200 (`h200`: auto slices for both KV dtypes)
# auto+pack+slices for both; elsewhere (`h100`: BF16 whole splits, FP8 `fp8:auto:2`) auto+pack for
# BF16 and auto+pack+slices under --slices auto:2 for FP8.
declared_issue5_tables() {
  if nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | grep -q H200; then
    issue5_tables auto+pack+slices auto+pack+slices "$@"
  else
    issue5_tables auto+pack auto+pack+slicesauto:2 --slices auto:2 "$@"
  fi
}

# floor_sweep: the split-K length floor (LATHE_ATTN_MIN_KV_PER_SPLIT) crossed with the split rule
# (LATHE_ATTN_SPLIT_RULE) on the serve kernels of wide serves: auto+pack, batch 4 / 16 / 64, 1k-4k,
# both KV dtypes, one process per (floor, rule) (90 s at most each), into $W/floor_<floor>_<rule>;
# appends each run's verdict, elapsed seconds and read ceiling to $S. Where the floor is above
# ceil(len / splits) it sets how many splits a short sequence uses (ops/splitk_policy.h).
floor_sweep() {
  local fr floor rule
  for fr in 128:seed 256:seed 256:even 512:even; do
    floor=${fr%:*} rule=${fr#*:}
    LATHE_ATTN_MIN_KV_PER_SPLIT=$floor LATHE_ATTN_SPLIT_RULE=$rule attn_bench "floor $floor $rule" \
      "$W/floor_${floor}_$rule" 90 --kernels serve --policies auto+pack --batches 4,16,64 --contexts 1024,2048,4096
  done
}

# slice_floor_ab SLICES: FP8 KV at batch 1 under auto+pack+slices with slice caps SLICES (e.g.
# auto:2), 1k-16k, with the slice floor (LATHE_ATTN_MIN_KV_PER_SLICE) at 256 (the default) and at
# 128, in that order and again (four processes, 60 s at most each), into $W/slicefloor_<floor>_r<n>;
# appends each run's verdict, elapsed seconds and read ceiling to $S.
slice_floor_ab() {
  local r floor
  for r in 1 2; do
    for floor in 256 128; do
      LATHE_ATTN_MIN_KV_PER_SLICE=$floor attn_bench "slice floor $floor r$r" "$W/slicefloor_${floor}_r$r" 60 \
        --kernels serve --policies auto+pack+slices --slices "$1" --dtypes fp8 --batches 1 \
        --contexts 1024,2048,4096,8192,16384
    done
  done
}

# auto2_targets: after issue5_tables, bench/attention/targets.py again per KV dtype with batch 1
# from auto+pack+slicesauto:2 (auto's slices, at most 2) into $W/targets_<dtype>_auto2.txt;
# appends the batch-1 count per dtype to $S.
auto2_targets() {
  local kv
  for kv in bf16 fp8; do
    python3 bench/attention/targets.py "$W/serve/attention_bench.csv" "$W/sdpa.csv" --policy auto+pack \
      --b1-policy auto+pack+slicesauto:2 --kv $kv >"$W/targets_${kv}_auto2.txt" 2>&1
    echo "== targets $kv auto+pack (batch 1: auto+pack+slicesauto:2)" >>"$S"
    tail -3 "$W/targets_${kv}_auto2.txt" | head -1 >>"$S"
  done
}
