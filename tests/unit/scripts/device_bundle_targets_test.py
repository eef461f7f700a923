#!/usr/bin/env python3
"""scripts/device-bundle.sh asks the build for executables only: the ones the gpu and golden
tests run (from ctest's JSON: two tests may run one executable, e.g. gpu_batch_invariance and
gpu_batch_invariance_halves with LATHE_FFN_BATCH32=off) and the lathe_bench_* executables
bench/ declares (not its helper library lathe_bench_graph_timing). A ctest name that is not a
target once made ninja stop at "unknown target" before building anything, and the bundle packed
stale executables. cmake and ctest are stubs here; the stub cmake records its arguments and makes
each asked-for executable, so nothing real is configured or built. It also prints what the device
tool would carry (the tracked tree and the bundle) and warns past the carry limit."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from script_test_support import ROOT, env_with_stubs, report, write_executable

SCRIPT = os.path.join(ROOT, "scripts", "device-bundle.sh")
BUNDLE = "unit-targets-test-bundle"  # ignored by git (/*-bundle/), removed afterwards


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        build = os.path.join(tmp, "build")
        stubs = os.path.join(tmp, "stubs")
        asked = os.path.join(tmp, "asked")
        os.makedirs(build)
        os.makedirs(stubs)
        open(os.path.join(build, "build.ninja"), "w").close()  # "configured": no cmake configure run
        with open(os.path.join(build, "CMakeCache.txt"), "w") as f:
            f.write("LATHE_SHARED_LIBS:BOOL=ON\n")
        tests = {"tests": [
            {"name": "gpu_batch_invariance", "command": [os.path.join(build, "gpu_batch_invariance")]},
            {"name": "gpu_batch_invariance_halves", "command": [os.path.join(build, "gpu_batch_invariance")]},
            {"name": "golden_cli", "command": [os.path.join(build, "golden_cli")]},
            {"name": "unit_scripts_x", "command": ["/usr/bin/python3", "x.py"]},
        ]}
        with open(os.path.join(tmp, "tests.json"), "w") as f:
            json.dump(tests, f)
        write_executable(os.path.join(stubs, "ctest"), f"#!/bin/sh\ncat '{os.path.join(tmp, 'tests.json')}'\n")
        # cmake --build DIR -j N -- -k 0 TARGETS...: record the targets, make each an executable.
        write_executable(os.path.join(stubs, "cmake"),
                         "#!/bin/sh\n"
                         "while [ $# -gt 0 ] && [ \"$1\" != -- ]; do shift; done\n"
                         "shift; shift; shift\n"
                         f"for t in \"$@\"; do echo \"$t\" >> '{asked}'; printf '#!/bin/sh\\n' > '{build}'/\"$t\"; "
                         f"chmod +x '{build}'/\"$t\"; done\n")
        r = subprocess.run(["bash", SCRIPT, "--build", build, "--bundle", BUNDLE], capture_output=True, text=True,
                           timeout=120, env=env_with_stubs(stubs))
        try:
            got = open(asked).read().split() if os.path.exists(asked) else []
            declared = sorted({line.split("(")[1].split()[0].rstrip(")")
                               for d in os.listdir(os.path.join(ROOT, "bench"))
                               if os.path.isfile(os.path.join(ROOT, "bench", d, "CMakeLists.txt"))
                               for line in open(os.path.join(ROOT, "bench", d, "CMakeLists.txt"))
                               if line.startswith("add_executable(lathe_bench_")})
            want = ["lathe", "golden_cli", "gpu_batch_invariance"] + declared
            if sorted(got) != sorted(want):
                failures.append(f"built {sorted(got)}, wanted {sorted(want)} (rc {r.returncode}, {r.stderr[-400:]!r})")
            if "missing" in r.stdout + r.stderr:
                failures.append("the script reported a missing executable: " +
                                " ".join(l for l in (r.stdout + r.stderr).splitlines() if "missing" in l))
            bundled = sorted(os.listdir(os.path.join(ROOT, BUNDLE, "bin"))) if os.path.isdir(
                os.path.join(ROOT, BUNDLE, "bin")) else []
            if bundled != sorted(want):
                failures.append(f"bundle bin/ holds {bundled}")
            # The carry line: the tracked tree and the bundle against the device tool's limit, a
            # warning from 2 MiB short of it (a limit of 1 MiB here, which the tree alone passes).
            carry = [l for l in r.stdout.splitlines() if l.startswith("device carry: ")]
            if len(carry) != 1 or not carry[0].endswith("MiB)") or " MiB of 64 " not in carry[0]:
                failures.append(f"carry line {carry}")
            elif int(carry[0].split()[2]) < 1 or "warning" in r.stderr:
                failures.append(f"carry {carry[0]!r}, stderr {r.stderr[-300:]!r}")
            tight_env = dict(env_with_stubs(stubs), DEVICE_CARRY_LIMIT_MIB="1")
            tight = subprocess.run(["bash", SCRIPT, "--build", build, "--bundle", BUNDLE], capture_output=True,
                                   text=True, timeout=120, env=tight_env)
            if "of the device tool's 1 MiB carry limit" not in tight.stderr:
                failures.append(f"no carry warning at a 1 MiB limit: {tight.stderr[-300:]!r}")
        finally:
            shutil.rmtree(os.path.join(ROOT, BUNDLE), ignore_errors=True)
    return report("device_bundle_targets_test", failures)


if __name__ == "__main__":
    sys.exit(main())
