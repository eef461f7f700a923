#!/usr/bin/env python3
"""Median decode-step times of `lathe bench latency` runs, lever on against off.

usage: step_ab_table.py DIR
DIR holds s_<on|off>-<model>-r<round>.txt (the bench's table: batch in column 1, step ms in
column 4). Prints, per model and batch present in both, the medians over rounds and on/off.
"""
import collections
import os
import re
import sys


def main(work):
    times = collections.defaultdict(list)
    for name in sorted(os.listdir(work)):
        m = re.fullmatch(r"s_(on|off)-(.+)-r\d+\.txt", name)
        if not m:
            continue
        for line in open(os.path.join(work, name)):
            x = line.split()
            if len(x) > 8 and x[0].isdigit():
                times[(m.group(1), m.group(2), int(x[0]))].append(float(x[3]))

    def med(v):
        return sorted(v)[len(v) // 2]

    for (arm, model, batch) in sorted(k for k in times if k[0] == "on"):
        off = times.get(("off", model, batch))
        if not off:
            continue
        on = times[(arm, model, batch)]
        print(f"{model:14s} B{batch:<3d} on {med(on):.3f} ms  off {med(off):.3f} ms  "
              f"on/off {med(on) / med(off):.4f}  (rounds {len(on)})")


if __name__ == "__main__":
    main(sys.argv[1])
