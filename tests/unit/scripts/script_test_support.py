"""What the device-script tests here share: the repository root, executable stubs that stand in
for build tools or gtest binaries, a PATH that finds the stubs first, and the FAIL report that
turns a list of failures into the test's exit status."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def write_executable(path, text):
    """Writes `text` (a shell script) to `path` and makes it executable."""
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)


def env_with_stubs(stubs):
    """The environment with the folder `stubs` first on PATH."""
    return dict(os.environ, PATH=stubs + os.pathsep + os.environ.get("PATH", ""))


def report(name, failures, ok_text="as expected"):
    """Prints each failure and a closing line; returns the exit status (1 on any failure)."""
    for f in failures:
        print("FAIL:", f)
    print(f"{name}: " + (ok_text if not failures else f"{len(failures)} failures"))
    return 1 if failures else 0
