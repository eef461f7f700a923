#!/usr/bin/env python3
"""scripts/device-bundle.sh refuses, before configuring or building anything, the requests that
would only fail on the device machine: a bundle folder git does not ignore (the device tool counts
it as tree and refuses the carry), an --add entry that is not NAME=PATH with a plain NAME or whose
PATH is not an executable file, and an unknown option (once silently dropped, e.g. a mistyped
--xz left the bundle uncompressed). Each case must exit 2 with its message and leave no folder."""
import os
import subprocess
import sys
import tempfile

from script_test_support import ROOT, env_with_stubs, report, write_executable

SCRIPT = os.path.join(ROOT, "scripts", "device-bundle.sh")


def run(args, build, stubs):
    # --build names a folder that does not exist, and cmake / ctest / ninja are stubs that leave a
    # mark and fail at once: a refusal that comes too late shows, and never starts a real build.
    return subprocess.run(["bash", SCRIPT, "--build", build] + args, capture_output=True, text=True, timeout=60,
                          env=env_with_stubs(stubs))


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        build = os.path.join(tmp, "never-configured")
        stubs = os.path.join(tmp, "stubs")
        mark = os.path.join(tmp, "build-tool-ran")
        os.makedirs(stubs)
        for tool in ("cmake", "ctest", "ninja"):
            write_executable(os.path.join(stubs, tool), f"#!/bin/sh\necho {tool} >> '{mark}'\nexit 97\n")
        plain = os.path.join(tmp, "plain.txt")
        with open(plain, "w") as f:
            f.write("not a program")
        cases = [
            (["--bundle", "bundle-not-ignored"], "is not ignored by git"),
            (["--bundle", "t-bundle", "--add", "x=/nonexistent/lathe"], "is not an executable file"),
            (["--bundle", "t-bundle", "--add", "x=" + plain], "is not an executable file"),
            (["--bundle", "t-bundle", "--add", "=/bin/sh"], "wants NAME=PATH"),
            (["--bundle", "t-bundle", "--add", "a/b=/bin/sh"], "wants NAME=PATH"),
            (["--bundle", "t-bundle", "--add", "/bin/sh"], "wants NAME=PATH"),
            (["--bundle", "t-bundle", "--xzz"], "unknown option '--xzz'"),
        ]
        for args, message in cases:
            r = run(args, build, stubs)
            if r.returncode != 2 or message not in r.stderr:
                failures.append(f"{args}: rc {r.returncode}, stderr {r.stderr.strip()!r}, wanted {message!r}")
            if os.path.exists(build) or os.path.exists(mark):
                failures.append(f"{args}: a build tool ran (the refusal came too late)")
                if os.path.exists(mark):
                    os.remove(mark)
        for name in ("bundle-not-ignored", "t-bundle"):
            if os.path.exists(os.path.join(ROOT, name)):
                failures.append(f"a bundle folder '{name}' was left in the tree")
    return report("device_bundle_args_test", failures, f"{len(cases)} of {len(cases)} checks as expected")


if __name__ == "__main__":
    sys.exit(main())
