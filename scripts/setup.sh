#!/usr/bin/env bash
# Installs everything lathe's build and tests need on a fresh Debian 12 machine (idempotent).
# Debian packages through apt-get; the Python test tools (OpenAI SDK, pytest, jinja2) through pip.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git curl python3 python3-pip
  nlohmann-json3-dev libcpp-httplib-dev libtomlplusplus-dev libcli11-dev
  libspdlog-dev libfmt-dev libpcre2-dev libutf8proc-dev
  libgtest-dev libgmock-dev libbenchmark-dev gnuplot-nox
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Python tools for the server and tokenizer test suites (pinned; see tests/requirements.txt).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python3 -m pip install -q --disable-pip-version-check -r "$here/tests/requirements.txt"
