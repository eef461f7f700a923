#!/usr/bin/env python3
"""scripts/bundle-unpack.sh on a synthetic device bundle: .gz and .xz files in bin/, lib/,
lib/NAME/ (an executable added from a shared-library build, with its own lathe libraries) and
tokenizer/ come back byte-identical, bin/ and lib/NAME/ get their execute bit back (a binary
gzipped by hand arrives without it), a second run changes nothing, and with no xz on PATH the .xz
files are read through Python's lzma module."""
import gzip
import lzma
import os
import shutil
import stat
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(ROOT, "scripts", "bundle-unpack.sh")

FILES = {  # path in the bundle -> (compression, contents)
    "bin/tool_gz": ("gz", b"\x7fELF gzipped binary bytes" * 50),
    "bin/tool_xz": ("xz", b"\x7fELF xz binary bytes" * 50),
    "lib/libthing.so.1": ("xz", b"shared library bytes" * 40),
    "lib/added/added": ("xz", b"\x7fELF an added build's binary" * 30),
    "lib/added/liblathe_backend_cuda.so": ("xz", b"its own backend library" * 30),
    "tokenizer/tokenizer.json": ("gz", b'{"model": "test"}'),
    "tokenizer/plain.txt": (None, b"left as it is"),
}


def make_bundle(root):
    for rel, (kind, data) in FILES.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if kind == "gz":
            path += ".gz"
            with gzip.open(path, "wb") as f:
                f.write(data)
        elif kind == "xz":
            path += ".xz"
            with lzma.open(path, "wb") as f:
                f.write(data)
        else:
            with open(path, "wb") as f:
                f.write(data)
        os.chmod(path, 0o644)  # as `gzip -c BIN > NAME.gz` leaves it


def check_bundle(root, label):
    for rel, (_, data) in FILES.items():
        path = os.path.join(root, rel)
        assert os.path.isfile(path), f"{label}: {rel} missing after unpacking"
        with open(path, "rb") as f:
            assert f.read() == data, f"{label}: {rel} differs from what was packed"
        assert not os.path.exists(path + ".gz") and not os.path.exists(path + ".xz"), f"{label}: {rel} archive left"
        executable = bool(os.stat(path).st_mode & stat.S_IXUSR)
        in_added_folder = rel.startswith("lib/") and rel.count("/") == 2
        assert executable == (rel.startswith("bin/") or in_added_folder), f"{label}: {rel} execute bit {executable}"


def run(bundle, env=None):
    out = subprocess.run(["bash", SCRIPT, bundle], capture_output=True, text=True, env=env)
    assert out.returncode == 0, f"bundle-unpack.sh failed ({out.returncode}): {out.stderr}"


def path_without_xz(d):
    """A PATH directory holding only the tools the script needs, none of them xz."""
    os.makedirs(d)
    for tool in ("bash", "sh", "gunzip", "gzip", "chmod", "rm", "cat"):
        found = shutil.which(tool)
        if found:
            os.symlink(found, os.path.join(d, tool))
    os.symlink(sys.executable, os.path.join(d, "python3"))
    return d


def main():
    with tempfile.TemporaryDirectory() as d:
        bundle = os.path.join(d, "bundle")
        make_bundle(bundle)
        run(bundle)
        check_bundle(bundle, "with xz")
        run(bundle)  # again: nothing left to unpack
        check_bundle(bundle, "second run")

        fallback = os.path.join(d, "bundle_no_xz")
        make_bundle(fallback)
        env = dict(os.environ, PATH=path_without_xz(os.path.join(d, "tools")))
        run(fallback, env)
        check_bundle(fallback, "without xz")

        out = subprocess.run(["bash", SCRIPT], capture_output=True, text=True)
        assert out.returncode != 0 and "usage" in out.stderr, "no argument must fail with the usage line"
    print("bundle_unpack_test: ok")


if __name__ == "__main__":
    main()
