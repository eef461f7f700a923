#!/usr/bin/env bash
# Session 34, call 1 (perf-bundle at 1294801, the new prefill attention kernel): gpu_attention's
# prefill tests (plain, memcheck, racecheck), then lathe_bench_prefill_attention with the old
# kernel's build of the same benchmark (main 47c31a4's paged_attention_prefill.cu linked in its
# place) alternating, two rounds, then the PyTorch SDPA peer on the same cells.
#   scripts/device-bundle.sh -j 2 --targets "lathe_bench_prefill_attention gpu_attention" --bundle perf-bundle --xz \
#     --add lathe_bench_prefill_attention_old=/tmp/oldpf/lathe_bench_prefill_attention_old
set -uo pipefail
b=$PWD/perf-bundle
scripts/bundle-unpack.sh "$b" || echo "unpack failed"
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/s34c1; rm -rf $W; mkdir -p $W
echo "commit $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >>$S
t0=$SECONDS
timeout 120 $b/bin/gpu_attention --gtest_filter='*Prefill*' >$W/prefill_tests.txt 2>&1
echo "gpu_attention *Prefill* rc=$? $((SECONDS - t0))s: $(grep -E '^\[  (PASSED|FAILED) ' $W/prefill_tests.txt | tr '\n' ' ')" >>$S
grep -E '^\[  FAILED  \]' $W/prefill_tests.txt | head -20 >>$S
for tool in memcheck racecheck; do
  filter='Shapes/Prefill.MatchesTheReference/*'; [[ $tool == racecheck ]] && filter='Shapes/Prefill.MatchesTheReference/*hd128'
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 3 $b/bin/gpu_attention --gtest_filter="$filter" \
    >$W/prefill_$tool.txt 2>&1
  echo "$tool rc=$? $((SECONDS - t0))s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/prefill_$tool.txt | tr '\n' ' ')" >>$S
done
for round in 1 2; do
  for bin in lathe_bench_prefill_attention_old lathe_bench_prefill_attention; do
    mkdir -p $W/${bin}_r$round
    timeout 120 $b/bin/$bin --out $W/${bin}_r$round >$W/${bin}_r$round.txt 2>&1
    echo "== $bin round $round rc=$? $((SECONDS - t0))s" >>$S
    cat $W/${bin}_r$round.txt >>$S
  done
done
timeout 150 python3 tools/peers/sdpa_prefill.py --out $W/sdpa_prefill.csv >$W/sdpa_prefill.txt 2>&1
echo "== sdpa_prefill rc=$? $((SECONDS - t0))s" >>$S
cat $W/sdpa_prefill.txt >>$S
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
