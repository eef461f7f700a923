#!/usr/bin/env python3
"""scripts/results-import.sh on a synthetic device folder: every file arrives writable, work.tar.xz
is unpacked into work/ beside it and removed, gtest logs (in the tarball and beside it) are stored
as NAME.xz that decompress to the original bytes, other text (summaries, CSVs, a benchmark's
stdout) is left as it came, and a DEST that already holds files is refused with exit status 2."""
import io
import lzma
import os
import stat
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_test_support import ROOT, report  # noqa: E402

SCRIPT = os.path.join(ROOT, "scripts", "results-import.sh")
GTEST = b"[==========] Running 2 tests from 1 test suite.\n[ RUN      ] A.B\n[       OK ] A.B (1 ms)\n"
BENCH = b"shape,kv,batch,context,us\n32/8/128,bf16,16,1024,29.8\n"
SUMMARY = b"commit e198536\nattention rc=0 passed 155, failed 0 (8 shards) 73s\n"


def make_source(root):
    os.makedirs(os.path.join(root, "rule"))
    with open(os.path.join(root, "summary.txt"), "wb") as f:
        f.write(SUMMARY)
    with open(os.path.join(root, "golden.txt"), "wb") as f:
        f.write(GTEST)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz") as tar:
        for name, data in (("attention.txt", GTEST), ("wide_r1/attention_bench.csv", BENCH),
                           ("wide_r1/bench.txt", b"read ceiling: 3196 GB/s\n")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    with open(os.path.join(root, "rule", "work.tar.xz"), "wb") as f:
        f.write(buffer.getvalue())
    for folder, _, files in os.walk(root):  # as the device tool leaves them: read-only
        for name in files:
            os.chmod(os.path.join(folder, name), 0o444)


def read(path, compressed=False):
    with (lzma.open(path) if compressed else open(path, "rb")) as f:
        return f.read()


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        src, dest = os.path.join(tmp, "src"), os.path.join(tmp, "call1")
        make_source(src)
        r = subprocess.run(["bash", SCRIPT, src, dest], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            failures.append(f"exit {r.returncode}: {r.stderr[-300:]!r}")
        expected = {  # path in DEST -> (compressed, bytes)
            "summary.txt": (False, SUMMARY),
            "golden.txt.xz": (True, GTEST),
            "rule/work/attention.txt.xz": (True, GTEST),
            "rule/work/wide_r1/attention_bench.csv": (False, BENCH),
            "rule/work/wide_r1/bench.txt": (False, b"read ceiling: 3196 GB/s\n"),
        }
        found = sorted(os.path.relpath(os.path.join(d, n), dest) for d, _, ns in os.walk(dest) for n in ns)
        if found != sorted(expected):
            failures.append(f"files {found}, wanted {sorted(expected)}")
        for rel, (compressed, data) in expected.items():
            path = os.path.join(dest, rel)
            if not os.path.isfile(path):
                continue
            if read(path, compressed) != data:
                failures.append(f"{rel}: bytes differ")
            if not os.stat(path).st_mode & stat.S_IWUSR:
                failures.append(f"{rel}: not writable")
        if "2 GPU test logs compressed" not in r.stdout:
            failures.append(f"summary line {r.stdout!r}")
        again = subprocess.run(["bash", SCRIPT, src, dest], capture_output=True, text=True, timeout=60)
        if again.returncode != 2 or "not empty" not in again.stderr:
            failures.append(f"a second import into a full DEST: exit {again.returncode}, {again.stderr!r}")
        missing = subprocess.run(["bash", SCRIPT, os.path.join(tmp, "nope"), os.path.join(tmp, "d2")],
                                 capture_output=True, text=True, timeout=60)
        if missing.returncode != 2 or "not a folder" not in missing.stderr:
            failures.append(f"a missing SRC: exit {missing.returncode}, {missing.stderr!r}")
    return report("results_import_test", failures)


if __name__ == "__main__":
    sys.exit(main())
