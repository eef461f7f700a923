#!/usr/bin/env bash
# Opcode histograms of the decode GEMV's FP8 ring kernels (SASS of a cubin built here).
cd "$(dirname "$0")"
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
$CUOBJ -sass gemv.cubin > $OUT/gemv.sass 2>&1; echo "cuobjdump rc=$?"
python3 - $OUT/gemv.sass <<'PY'
import re, sys, collections
text = open(sys.argv[1]).read()
funcs = re.split(r'\n\s*Function : ', text)
for f in funcs[1:]:
    name = f.split('\n', 1)[0].strip()
    # gemv_kernel<kMaxM, kFp8=true, kStages, kBitTrick, kBalanced, kGroupSteps, kMinCtas>
    m = re.match(r'_ZN5lathe4cuda\d*_GLOBAL__N__\w+?11gemv_kernelILi(\d+)ELb(\d)ELi(\d+)ELb(\d)ELb(\d)ELi(\d+)ELi(\d+)EEEvNS0_11gemv_detail6ParamsE', name)
    if not m or m.group(2) != '1': continue
    ops = collections.Counter()
    for line in f.split('\n'):
        mm = re.match(r'\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?([A-Z0-9_.]+)', line)
        if mm: ops[mm.group(2)] += 1
    key = 'M%s fp8 s%s bits%s bal%s g%s ctas%s' % (m.group(1), m.group(3), m.group(4), m.group(5), m.group(6), m.group(7))
    total = sum(ops.values())
    top = ', '.join('%s %d' % kv for kv in ops.most_common(22))
    print(key, 'total', total, ':', top)
PY
grep -n "F2FP\|HADD2.F32\|F2F\|I2F" $OUT/gemv.sass | head -20
