#!/usr/bin/env bash
# Configures and builds lathe into build/ (Release, Ninja). CUDA is built when nvcc is found;
# pass extra CMake flags after the script name, e.g. scripts/build.sh -DLATHE_CUDA=OFF.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${LATHE_BUILD_DIR:-$here/build}"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build" --parallel "$(nproc)"
