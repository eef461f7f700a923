#!/usr/bin/env python3
"""bench/attention/kernel_columns.py on two synthetic runs: the per-kernel means over the runs, the
times against --base, the grouping of kernels by output bytes (a kernel whose runs disagree marked
with "?"), rows other than split-K ignored, a policy column where the runs hold several policies,
and the refusals (no split-K cells, an unknown base)."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(ROOT, "bench", "attention", "kernel_columns.py")
HEADER = "# device: test\nshape,kv,batch,context,policy,arm,splits,rows_per_cta,kernel,us,gbs,pct_ceiling,slices,out_fnv\n"


def row(kernel, us, pct, fp, batch=4, arm="decode_splitk", policy="auto+pack"):
    return f"32/8/128,bf16,{batch},1024,{policy},{arm},9,4,{kernel},{us},0,{pct},1,{fp}\n"


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


def main():
    with tempfile.TemporaryDirectory() as d:
        r1, r2 = os.path.join(d, "r1.csv"), os.path.join(d, "r2.csv")
        with open(r1, "w") as f:
            f.write(HEADER + row(24, 10.0, 50.0, "aa") + row(25, 12.0, 40.0, "aa") + row(14, 11.0, 44.0, "bb"))
            f.write(row(1, 30.0, 10.0, "cc", arm="decode_nonsplit"))
        with open(r2, "w") as f:
            f.write(HEADER + row(24, 10.0, 52.0, "aa") + row(25, 12.0, 42.0, "aa") + row(14, 11.0, 46.0, "dd"))
        out = run(r1, r2, "--base", "25")
        assert out.returncode == 0, out.stderr
        assert out.stdout.splitlines() == [
            "shape | kv | B | L | k24 % | k25 % | k14 % | k24 vs k25 | k14 vs k25 | bytes alike",
            "32/8/128 | bf16 | 4 | 1024 | 51.0 | 41.0 | 45.0 | 1.200 | 1.091 | 24=25 14?",
        ], out.stdout
        two = os.path.join(d, "two_policies.csv")
        with open(two, "w") as f:
            f.write(HEADER + row(24, 10.0, 50.0, "aa") + row(25, 12.0, 40.0, "aa"))
            sliced = "auto+pack+slices"
            f.write(row(24, 8.0, 60.0, "aa", policy=sliced) + row(25, 10.0, 48.0, "aa", policy=sliced))
        out = run(two, "--base", "25")
        assert out.returncode == 0, out.stderr
        assert out.stdout.splitlines() == [
            "shape | kv | B | L | policy | k24 % | k25 % | k24 vs k25 | bytes alike",
            "32/8/128 | bf16 | 4 | 1024 | auto+pack | 50.0 | 40.0 | 1.200 | 24=25",
            "32/8/128 | bf16 | 4 | 1024 | auto+pack+slices | 60.0 | 48.0 | 1.250 | 24=25",
        ], out.stdout
        out = run(r1, "--base", "9")
        assert out.returncode == 2 and "--base 9" in out.stderr, (out.returncode, out.stderr)
        empty = os.path.join(d, "empty.csv")
        with open(empty, "w") as f:
            f.write(HEADER + row(1, 30.0, 10.0, "cc", arm="decode_nonsplit"))
        out = run(empty)
        assert out.returncode == 2 and "no split-K cells" in out.stderr, (out.returncode, out.stderr)
    print("kernel_columns.py: ok")


if __name__ == "__main__":
    main()
