#!/usr/bin/env python3
"""bench/attention/targets.py on synthetic CSVs: which rows it takes (KV dtype, policy, the
batch-1 policy, serve kernels) and the three issue-5 counts it prints."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(ROOT, "bench", "attention", "targets.py")

HEADER = "shape,kv,batch,context,policy,arm,splits,rows_per_cta,kernel,us,gbs,pct_ceiling,slices,out_fnv\n"


def row(batch, context, policy, kernel, us, pct, kv="bf16"):
    gbs = 40.0 * pct  # ceiling 4000 GB/s
    return f"32/8/128,{kv},{batch},{context},{policy},decode_splitk,9,4,{kernel},{us},{gbs},{pct},1,0\n"


def run(bench, sdpa, *args):
    out = subprocess.run([sys.executable, SCRIPT, bench, sdpa, *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"targets.py failed: {out.stderr}")
    return out.stdout


def main():
    with tempfile.TemporaryDirectory() as d:
        bench = os.path.join(d, "bench.csv")
        sdpa = os.path.join(d, "sdpa.csv")
        with open(bench, "w") as f:
            f.write("# read ceiling: 4000 GB/s (best of 10, 4 GiB)\n" + HEADER)
            f.write(row(1, 16384, "auto+pack", "serve21", 20.0, 50.0))
            f.write(row(1, 16384, "auto+pack+slices", "serve21", 11.0, 90.0))
            f.write(row(16, 4096, "auto+pack", "serve14", 10.0, 86.0))
            f.write(row(16, 4096, "auto+pack", "6", 5.0, 99.0))  # another kernel: not taken
            f.write(row(16, 4096, "auto+pack", "serve14", 1.0, 99.0, kv="fp8"))  # another dtype
        with open(sdpa, "w") as f:
            f.write("shape,batch,context,us,gbs\n")
            f.write("32/8/128,1,16384,10.0,3600\n")  # 90% of the ceiling, faster than ours
            f.write("32/8/128,16,4096,10.5,3200\n")  # 80%: we must be faster, and are

        plain = run(bench, sdpa)
        assert ">= 85% at batch 1, L >= 16k: 0 of 1" in plain, plain
        assert ">= 85% at batch >= 16, L >= 4k: 1 of 1" in plain, plain
        assert "SDPA target met (within 3%, faster where SDPA < 85%): 1 of 2" in plain, plain

        sliced = run(bench, sdpa, "--b1-policy", "auto+pack+slices")
        assert "(batch 1: auto+pack+slices)" in sliced, sliced
        assert ">= 85% at batch 1, L >= 16k: 1 of 1" in sliced, sliced
        # SDPA / ours = 10 / 11 = 0.91 at batch 1: not within 3%.
        assert "SDPA target met (within 3%, faster where SDPA < 85%): 1 of 2" in sliced, sliced
        assert "   50.0" not in sliced, sliced  # the unsliced batch-1 row is not taken
        assert "read %" not in sliced and "reaches" not in sliced, sliced  # no read_us column here

        # With the size-matched read: read % = ours % x ours us / read us, and the counts say
        # in how many target cells the read kernel itself reaches 85%.
        with open(bench, "w") as f:
            f.write("# read ceiling: 4000 GB/s (best of 10, 4 GiB)\n" + HEADER.rstrip("\n") + ",read_us,pct_read\n")
            f.write(row(1, 16384, "auto+pack", "serve21", 20.0, 50.0).rstrip("\n") + ",12.5,62.5\n")  # read 80%
            f.write(row(16, 4096, "auto+pack", "serve14", 10.0, 86.0).rstrip("\n") + ",9.0,90.0\n")  # read 95.6%
            f.write(row(16, 16384, "auto+pack", "serve14", 40.0, 86.0).rstrip("\n") + ",,\n")  # not measured
        read = run(bench, sdpa)
        assert "read %" in read, read
        assert "   80.0" in read and "   95.6" in read, read
        assert ">= 85% at batch 1, L >= 16k: 0 of 1 (the read kernel reaches 85% in 0 of them)" in read, read
        assert ">= 85% at batch >= 16, L >= 4k: 2 of 2 (the read kernel reaches 85% in 1 of them)" in read, read
    print("targets.py: ok")


if __name__ == "__main__":
    main()
