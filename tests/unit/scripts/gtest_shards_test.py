#!/usr/bin/env python3
"""scripts/gtest-shards.sh runs a binary as N gtest shards side by side, each told its shard by
GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX and given the extra arguments, gathers their output into one
log in shard order, and prints one line summing the shards' gtest totals with the last failing
status. A fake binary stands in for gtest here: it reports a shard-dependent count and fails in
one shard."""
import os
import subprocess
import sys
import tempfile

from script_test_support import ROOT, report, write_executable

SCRIPT = os.path.join(ROOT, "scripts", "gtest-shards.sh")

FAKE = """#!/bin/sh
# shard i of n passes i + 1 tests; shard 2 also fails one; echoes its arguments
echo "args: $*"
echo "shard $GTEST_SHARD_INDEX of $GTEST_TOTAL_SHARDS"
echo "[  PASSED  ] $((GTEST_SHARD_INDEX + 1)) tests."
if [ "$GTEST_SHARD_INDEX" = 2 ]; then
  echo "[  FAILED  ] 1 test, listed below:"
  exit 1
fi
exit 0
"""


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        fake = os.path.join(tmp, "fake_gtest")
        write_executable(fake, FAKE)
        log = os.path.join(tmp, "suite.log")
        r = subprocess.run(["bash", SCRIPT, fake, "4", "30", log, "--gtest_filter=-*Slow*"], capture_output=True,
                           text=True, timeout=60)
        line = r.stdout.strip()
        if r.returncode != 0 or line != "rc=1 passed 10, failed 1 (4 shards)":
            failures.append(f"summary {line!r} (script rc {r.returncode}, stderr {r.stderr!r})")
        text = open(log).read() if os.path.exists(log) else ""
        order = [int(l.split()[1]) for l in text.splitlines() if l.startswith("shard ")]
        if order != [0, 1, 2, 3]:
            failures.append(f"log holds shards {order}, wanted [0, 1, 2, 3] in order")
        if text.count("args: --gtest_filter=-*Slow*") != 4:
            failures.append("not every shard got the extra argument")
        left = [n for n in os.listdir(tmp) if n.startswith("suite.log.")]
        if left:
            failures.append(f"per-shard files left behind: {left}")
    return report("gtest_shards_test", failures)


if __name__ == "__main__":
    sys.exit(main())
