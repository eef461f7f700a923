#!/usr/bin/env python3
"""lathe_bench_attention's --shapes refuses what the decode kernels cannot run, before touching the
GPU (so it runs on CI machines without one): exit status 2 and an error naming the label, for a
head count that is not a whole number of query groups, a group past 16 heads, an unbuilt head dim
and malformed labels. An accepted label is shown by a later bad flag being the one refused
(the benchmark itself needs a GPU). LATHE_BENCH_ATTENTION is the binary."""
import os
import subprocess
import sys

BINARY = os.environ.get("LATHE_BENCH_ATTENTION", "")


def run(*args):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=60)


def main():
    if not os.path.isfile(BINARY):
        print(f"no lathe_bench_attention at {BINARY!r}")
        return 1
    failures = []
    for bad in ["40/7/128", "272/8/128", "32/8/96", "32/8", "32/8/128/1", "032/8/128", "32/0/128", "a/8/128",
                "32/8/128,40/6/128"]:
        r = run("--shapes", bad)
        label = bad.split(",")[-1]
        if r.returncode != 2 or f"error: --shapes: {label} is not heads/kv_heads/head_dim" not in r.stderr:
            failures.append(f"--shapes {bad}: rc {r.returncode}, stderr {r.stderr[-300:]!r}")
    for good in ["40/8/128", "24/4/256,32/8/128", "16/8/64", "64/4/128"]:
        r = run("--shapes", good, "--tables", "bogus")
        if r.returncode != 2 or "--shapes" in r.stderr or "error: --tables: bogus" not in r.stderr:
            failures.append(f"--shapes {good}: rc {r.returncode}, stderr {r.stderr[-300:]!r}")
    for f in failures:
        print("FAIL:", f)
    print("attention_bench_args_test: " + ("as expected" if not failures else f"{len(failures)} failures"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
