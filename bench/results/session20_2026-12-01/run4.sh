# Session 20, call 4: SASS of variant 22 and of 14 (HD 128, BF16 and FP8 KV) from the bench binary,
# to find what makes 22's one-unit-per-CTA launches slower than 14's (call 3).
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
for kv in 6Bf16Kv 5Fp8Kv; do
  for k in 23paged_decode_splitk_mma 30paged_decode_splitk_persistent; do
    name="_ZN5lathe4cuda4attn6splitk${k}INS1_${kv}ELi128ENS2_8SplitCfgILi4ELi2ELi16ELi3ELb1ELi1ELb0ELb1EEEEEvNS2_11SplitParamsE"
    cuobjdump -sass -fun "$name" $b/bin/lathe_bench_attention > $OUT/sass_${kv}_${k}.txt 2>&1
    echo "$kv $k: $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' $OUT/sass_${kv}_${k}.txt) instructions, $(grep -cE 'LDL|STL' $OUT/sass_${kv}_${k}.txt) local"
  done
done
