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

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPT = os.path.join(ROOT, "scripts", "device-bundle.sh")


def run(args, build, stubs):
    # --build names a folder that does not exist, and cmake / ctest / ninja are stubs that leave a
    # mark and fail at once: a refusal that comes too late shows, and never starts a real build.
    env = dict(os.environ, PATH=stubs + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run(["bash", SCRIPT, "--build", build] + args, capture_output=True, text=True, timeout=60,
                          env=env)


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        build = os.path.join(tmp, "never-configured")
        stubs = os.path.join(tmp, "stubs")
        mark = os.path.join(tmp, "build-tool-ran")
        os.makedirs(stubs)
        for tool in ("cmake", "ctest", "ninja"):
            with open(os.path.join(stubs, tool), "w") as f:
                f.write(f"#!/bin/sh\necho {tool} >> '{mark}'\nexit 97\n")
            os.chmod(os.path.join(stubs, tool), 0o755)
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
    for f in failures:
        print("FAIL:", f)
    print(f"device_bundle_args_test: {len(cases) - len(failures)} of {len(cases)} checks as expected"
          if not failures else f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
