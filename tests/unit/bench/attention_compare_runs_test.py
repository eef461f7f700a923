#!/usr/bin/env python3
"""bench/attention/compare_runs.py on synthetic runs: CSVs and console logs, the speed-up, the
FP8/BF16 ratio and the byte verdict from the output fingerprints."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(ROOT, "bench", "attention", "compare_runs.py")

HEADER = "shape,kv,batch,context,policy,arm,splits,rows_per_cta,kernel,us,gbs,pct_ceiling,slices,out_fnv\n"


def csv_row(kv, us, pct, fnv, kernel="serve21"):
    return f"32/8/128,{kv},1,16384,auto+pack,decode_splitk,9,4,{kernel},{us},{40.0 * pct},{pct},1,{fnv}\n"


def log_row(kv, us, pct, fnv):
    return (f"32/8/128   {kv:4} B1   L16384  auto+pack        decode_splitk      splits 9  slices 1 rows 4  "
            f"kserve21 {us:9.1f} us   2000 GB/s {pct:5.1f}%  read    17.4 us  out {fnv}\n")


def run(new, base):
    out = subprocess.run([sys.executable, SCRIPT, new, base], capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"compare_runs.py failed: {out.stderr}")
    return out.stdout


def main():
    with tempfile.TemporaryDirectory() as d:
        base, new = os.path.join(d, "base.csv"), os.path.join(d, "new.csv")
        with open(base, "w") as f:
            f.write("# read ceiling: 4000 GB/s\n" + HEADER)
            f.write(csv_row("bf16", 20.0, 50.0, "00000000000000aa"))
            f.write(csv_row("fp8", 20.0, 25.0, "00000000000000bb"))
            f.write(csv_row("bf16", 30.0, 40.0, "00000000000000cc", kernel="5"))  # only in base
        with open(new, "w") as f:
            f.write(HEADER)
            f.write(csv_row("bf16", 16.0, 62.5, "00000000000000aa"))
            f.write(csv_row("fp8", 10.0, 50.0, "00000000000000bd"))
        out = run(new, base)
        lines = [line for line in out.splitlines()[1:] if line.strip()]
        assert len(lines) == 2, out  # the kernel-5 cell is in one run only
        bf16 = next(line for line in lines if " bf16 " in line)
        fp8 = next(line for line in lines if " fp8 " in line)
        assert "1.25" in bf16 and bf16.endswith("same"), bf16  # 20 / 16 us, same fingerprint
        assert "2.00" in fp8 and "0.62" in fp8 and fp8.endswith("DIFF"), fp8  # 20 / 10 us; 10 / 16 us

        # Console logs give the same cells (the fingerprint from "out ...").
        base_log, new_log = os.path.join(d, "base.txt"), os.path.join(d, "new.txt")
        with open(base_log, "w") as f:
            f.write("read ceiling: 4000 GB/s\n" + log_row("bf16", 20.0, 50.0, "00000000000000aa"))
        with open(new_log, "w") as f:
            f.write(log_row("bf16", 16.0, 62.5, "00000000000000aa"))
        logged = [line for line in run(new_log, base_log).splitlines()[1:] if line.strip()]
        assert len(logged) == 1 and "1.25" in logged[0] and logged[0].endswith("same"), logged

        # --summary: one closing line, and status 1 when any cell's bytes differ.
        out = subprocess.run([sys.executable, SCRIPT, new, base, "--summary"], capture_output=True, text=True)
        assert out.returncode == 1, out
        last = out.stdout.splitlines()[-1]
        assert last == "summary: 2 cells, bytes differ in 1; speed-up mean 1.625, min 1.250, max 2.000", last
        out = subprocess.run([sys.executable, SCRIPT, new, base, "--summary", "--dtype", "bf16"],
                             capture_output=True, text=True)
        assert out.returncode == 0 and out.stdout.splitlines()[-1].startswith("summary: 1 cells, bytes differ in 0"), out
    print("compare_runs.py: ok")


if __name__ == "__main__":
    main()
