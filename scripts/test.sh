#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs every ctest suite that can run
# on this machine (unit, golden, server; gpu suites report "skipped" without a GPU).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
"$here/scripts/build.sh"
build="${LATHE_BUILD_DIR:-$here/build}"
ctest --test-dir "$build" --output-on-failure --timeout 1200 "$@"
