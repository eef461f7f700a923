#!/usr/bin/env python3
"""How far ahead the decode GEMV's weight loads really are, read from its SASS.

For every weight load (`LDG.E.NA.LTC256B.128`) of each `gemv_kernel` instantiation, counts the
instructions (straight-line, branches ignored) until one of the load's four destination registers
is first read. A register ring that keeps kStages steps in flight reads its loads several steps'
worth of instructions later (~250 per FP8 step); a first read within a few hundred instructions
means the data is consumed, or moved, while the load is still in flight.

Input: `cuobjdump -sass` of a binary or cubin holding the kernels (cuobjdump ships with the CUDA
toolkit; on a machine without it, PyPI's `nvidia-cuda-cuobjdump` wheel carries the binary).
Usage: ldg_use_distance.py SASS.txt [NAME_SUBSTRING]   (session 15, docs/PERFORMANCE.md)
"""
import re
import sys


def kernels(path):
    for chunk in re.split(r'\n\s*Function : ', open(path).read())[1:]:
        name = chunk.split('\n', 1)[0].strip()
        if 'gemv_kernel' in name:
            yield name, [m.group(1).strip() for m in re.finditer(r'/\*[0-9a-f]{4,}\*/\s+(.*?);', chunk)]


def first_use_distances(ins):
    out = []
    for i, text in enumerate(ins):
        m = re.match(r'(@!?U?P\w+\s+)?LDG\.E\.NA\.LTC256B\.128\S*\s+R(\d+)', text)
        if not m:
            continue
        regs = [f'R{int(m.group(2)) + j}' for j in range(4)]
        dist = None
        for j in range(i + 1, len(ins)):
            later = ins[j]
            body = later.split(None, 2)[-1] if later.startswith('@') else (later.split(None, 1)[1] if ' ' in later else '')
            sources = ','.join(body.split(',')[1:])  # operands after the destination
            if any(re.search(r'\b' + r + r'\b', sources) for r in regs):
                dist = j - i
                break
        out.append(dist)
    return out


def main():
    want = sys.argv[2] if len(sys.argv) > 2 else ''
    print('kernel template arguments | instructions | weight loads | first read < 300 instructions later')
    for name, ins in kernels(sys.argv[1]):
        if want not in name:
            continue
        dists = first_use_distances(ins)
        args = re.search(r'gemv_kernelI(.*?)EEEv', name)
        short = sum(1 for d in dists if d is not None and d < 300)
        print(f'{args.group(1) if args else name} | {len(ins)} | {len(dists)} | {short}')


if __name__ == '__main__':
    main()
