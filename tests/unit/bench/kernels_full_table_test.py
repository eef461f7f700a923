#!/usr/bin/env python3
"""bench/kernels/full_table.py on a synthetic kernels_bench.txt: which row is "ours" at each width
(the 32-row tier over the halves at 17..32 rows, the halves where it did not run), which peer each
dtype takes, and the refusal of a file with no rows."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(ROOT, "bench", "kernels", "full_table.py")


def line(shape, n, k, dtype, m, impl, us, pct):
    return f"{'qwen3-8b':<12} {shape:<14} {n:>6} {k:>6} {dtype:<5} {m:>3} {impl:<18} {us:>9.1f} {100:>7} {pct:>5.1f}%\n"


def main():
    text = "device: test\nread ceiling: best 3000 GB/s\n\n"
    text += line("gate_up", 24576, 4096, "fp8", 1, "read (same bytes)", 30.0, 95.0)
    text += line("gate_up", 24576, 4096, "fp8", 1, "gemv", 35.0, 90.0)
    text += line("gate_up", 24576, 4096, "fp8", 1, "  ring (old default)", 36.0, 88.0)
    text += line("gate_up", 24576, 4096, "fp8", 1, "cublaslt fp8", 34.0, 91.0)
    text += line("gate_up", 24576, 4096, "fp8", 32, "gemv_batch16 x2 halves", 70.0, 45.0)
    text += line("gate_up", 24576, 4096, "fp8", 32, "gemv_batch32", 50.0, 63.0)
    text += line("gate_up", 24576, 4096, "fp8", 32, "cublaslt fp8", 36.0, 87.0)
    text += line("q|o", 4096, 4096, "bf16", 1, "gemv", 13.0, 81.0)
    text += line("q|o", 4096, 4096, "bf16", 1, "cublas bf16", 15.0, 69.0)
    text += line("q|o", 4096, 4096, "bf16", 32, "gemv_batch16 x2 halves", 18.0, 58.0)
    text += "qwen3-8b     gate_up        fp8   ours m=1  90.0%  m=16  80.0%  read  95.0%\n"
    failures = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "kernels_bench.txt")
        with open(path, "w") as f:
            f.write(text)
        out = subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True)
        lines = out.stdout.splitlines()
        want = [
            "| model | shape (n x k) | dtype | m=1 | m=32 |",
            "|---|---|---|---|---|",
            "| qwen3-8b | gate_up 24576x4096 | fp8 | 35.0 (90.0%) / 34.0 (91.0%) | 50.0 (63.0%) / 36.0 (87.0%) |",
            "| qwen3-8b | q\\|o 4096x4096 | bf16 | 13.0 (81.0%) / 15.0 (69.0%) | 18.0 (58.0%) |",
        ]
        if out.returncode != 0 or lines != want:
            failures.append(f"table: rc {out.returncode}, got {lines!r}, stderr {out.stderr!r}")
        empty = os.path.join(d, "empty.txt")
        with open(empty, "w") as f:
            f.write("device: test\n")
        out = subprocess.run([sys.executable, SCRIPT, empty], capture_output=True, text=True)
        if out.returncode != 2 or "no benchmark rows" not in out.stderr:
            failures.append(f"empty file: rc {out.returncode}, stderr {out.stderr!r}")
    for f in failures:
        print("FAIL:", f)
    print("kernels_full_table_test:", "FAILED" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
