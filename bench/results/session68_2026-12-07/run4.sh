#!/usr/bin/env bash
# Session 68, variant 29 (bundle p68-bundle = 5761402: 26's geometry, 23's at head dim 256, on three
# stages, each warp computing its next tile's scores before this tile's softmax update and PV; FP8
# KV only, BF16 launches 26 / 23), any card. (It ran as call 4; the sliced policy did not: the
# filter names the label "auto+pack+slices", which --slices then caps. run5.sh corrects it.)
# 1. gpu_attention's SplitKPipelineDepthIsByteNeutral (29 against 26 in every shape, both KV dtypes,
#    sliced and not, packed and not, batch 1 / 3 / 8), 8 shards;
# 2. FP8 KV, the serve kernel (26 / 23 at batch 1) against 29, batch 1 and 4, 4k / 16k / 64k, the
#    three shapes, unsliced and under the h100 declaration's slices (auto:2), two processes in
#    turn with the order swapped; the output fingerprints must be equal per cell;
# 3. run3.sh's SASS profile of 29 at batch 1, 32/8/128 at 16k.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p68-bundle}"
rm -rf "$W"
W=$(mktemp -d)  # outside $OUT: $OUT/work.tar.xz carries it
echo "pipeline-depth bytes $(LATHE_TEST_DEVICE=cuda scripts/gtest-shards.sh $b/bin/gpu_attention 8 150 \
  $W/pipeline.txt --gtest_brief=1 '--gtest_filter=*PipelineDepthIsByteNeutral*') $((SECONDS - t0))s" >>$S
grep -E '^\[  FAILED  \]|Failure|variant 29' $W/pipeline.txt | head -10 >>$S
cells=(--policies auto+pack,auto+pack+slicesauto:2 --slices auto:2 --dtypes fp8
  --shapes 32/8/128,24/4/256,64/8/128 --batches 1,4 --contexts 4096,16384,65536)
for r in 1 2; do
  order=serve,29
  [[ $r == 2 ]] && order=29,serve
  timeout 150 "$b/bin/lathe_bench_attention" --kernels $order "${cells[@]}" >$W/ab_r$r.txt 2>&1
  echo "ab r$r ($order) rc=$? $((SECONDS - t0))s $(grep -h 'ceiling' $W/ab_r$r.txt | head -1)" >>$S
done
tar -C $W -cJf $OUT/work.tar.xz .
python3 - "$W/ab_r1.txt" "$W/ab_r2.txt" >>$S <<'PY'
import re, sys, collections
# cell -> kernel -> [(us, hash)] over the two runs
cells = collections.defaultdict(lambda: collections.defaultdict(list))
for path in sys.argv[1:]:
    for line in open(path):
        m = re.match(r'(\S+)\s+fp8\s+B(\d+)\s+L(\d+)\s+(\S+)\s+\S+\s+splits (\d+)\s+slices (\d+).*?k(\S+)\s+([\d.]+) us\s+\d+ GB/s\s+([\d.]+)%.*out ([0-9a-f]+)', line)
        if m:
            shape, batch, ctx, pol, splits, slices, kern, us, pct, out = m.groups()
            kern = '29' if kern == '29' else 'serve'
            cells[(shape, int(batch), int(ctx), pol)][kern].append((float(us), float(pct), out))
print("shape      B  L      policy                  serve us (%)        29 us (%)           29/serve  bytes")
for key in sorted(cells):
    k = cells[key]
    if not k['serve'] or not k['29']:
        continue
    s = sum(u for u, _, _ in k['serve']) / len(k['serve'])
    v = sum(u for u, _, _ in k['29']) / len(k['29'])
    sp = sum(p for _, p, _ in k['serve']) / len(k['serve'])
    vp = sum(p for _, p, _ in k['29']) / len(k['29'])
    same = len({h for _, _, h in k['serve'] + k['29']}) == 1
    print(f"{key[0]:<10} {key[1]:<2} {key[2]:<6} {key[3]:<23} {s:8.1f} ({sp:4.1f})     {v:8.1f} ({vp:4.1f})     {v / s:6.3f}    {'equal' if same else 'DIFFER'}")
PY
command -v ncu >/dev/null ||
  export PATH="$PATH:/usr/local/cuda/bin:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)"
tag=sass_29_32_8_128_fp8_b1_l16k
timeout 120 ncu --clock-control none --cache-control none --set full --import-source yes \
  --kernel-name-base demangled -k regex:splitk_mma -s 2 -c 1 --export "$W/$tag" \
  "$b/bin/lathe_bench_attention" --kernels 29 --policies auto+pack --shapes 32/8/128 --dtypes fp8 \
  --batches 1 --contexts 16384 >"$W/$tag.txt" 2>&1
echo "== $tag rc=$? $((SECONDS - t0))s" >>"$S"
ncu --import "$W/$tag.ncu-rep" --page details >>"$W/$tag.txt" 2>&1
grep -E "^    (Duration|DRAM Throughput|Registers Per Thread|Warp Cycles Per Issued Instruction|Eligible Warps Per Scheduler|Dynamic Shared Memory Per Block) " "$W/$tag.txt" | cut -c1-110 >>"$S"
ncu --import "$W/$tag.ncu-rep" --page source --print-source sass --csv -k regex:splitk_mma >"$W/${tag}_sass.csv" 2>&1
python3 bench/kernels/sass_stalls.py "$W/${tag}_sass.csv" --top 40 >"$W/${tag}_top.txt" 2>&1
xz -9 "$W/${tag}_sass.csv"
rm -f "$W/$tag.ncu-rep"
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
