#!/usr/bin/env bash
# Run HERE (the build machine). Configures a CUDA build in build-device/ (sm_90a), builds the
# `lathe` binary, every gpu and golden test executable and the benchmark binaries, and packs
# them with every non-system shared library they need into device-bundle/{bin,lib} (stripped,
# kept under 50 MB). The device machine lacks our Debian -dev packages; it has the CUDA 13
# toolkit (cuBLAS, cuBLASLt), glibc and libstdc++, which are therefore not bundled.
#
# Usage: scripts/device-bundle.sh [-j N] [--build DIR] [--targets "t1 t2 ..."] [--bundle NAME]
#                                 [--with-tokenizer] [--gzip | --xz] [--add NAME=PATH ...]
#   --build reuses another CUDA build directory (configured already, e.g. in a clean worktree);
#   --targets bundles only those targets; --bundle names the bundle directory (default
#   device-bundle); --with-tokenizer copies ../shared/tokenizers/qwen3 into <bundle>/tokenizer
#   (the device machine sees only the repository, for `serve --tokenizer`); --gzip compresses the
#   binaries, their libraries and the tokenizer (kernel-heavy binaries shrink ~3x); --xz compresses
#   with xz -9 instead (about a third smaller again: lathe 11.4 MB gzipped, 7.7 MB with xz, so more
#   binaries fit the device tool's 64 MiB carry limit). scripts/bundle-unpack.sh unpacks either
#   there (scripts/device-perf.sh calls it); --add NAME=PATH (repeatable) bundles another build's
#   executable (a branch's lathe, main's for an A/B) as bin/NAME with its libraries, stripped and
#   compressed like the rest, and lists it in <bundle>/ADDED with its source commit. An executable
#   of a shared-library build (LATHE_SHARED_LIBS) keeps its own build's lathe libraries: they and
#   it go to lib/NAME/, and bin/NAME is a wrapper that puts that folder first on the library path.
#   The bundle directory must be ignored by git (`/*-bundle/` or `/device-bundle/`): the device
#   tool counts an untracked, unignored folder as part of the tree and refuses a carry that passes
#   64 MiB. The script ends with that sum ("device carry: N MiB of 64": the tracked tree, ~29 MiB
#   in session 64 once the GPU test logs under bench/results/ were xz-compressed, and the bundle)
#   and a warning from 2 MiB short of the limit (DEVICE_CARRY_LIMIT_MIB sets it).
# The build is configured with LATHE_SHARED_LIBS=ON: every executable shares one copy of the CUDA
# backend (lib/liblathe_backend_cuda.so, ~18 MB with --xz) instead of carrying its own, so one
# bundle holds lathe, every gpu/golden test and the benchmarks.
# Then:  run (device tool) with carry ["device-bundle"]: scripts/device-check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-device
bundle=$root/device-bundle
jobs=2
only=""
tokenizer=0
compress=0
added=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    -j) jobs=$2; shift ;;
    --build) build=$(realpath "$2"); shift ;;
    --targets) only=$2; shift ;;
    --bundle) bundle=$root/$2; shift ;;
    --with-tokenizer) tokenizer=1 ;;
    --gzip) compress=1 ;;
    --xz) compress=2 ;;
    --add) added+=("$2"); shift ;;
    *) echo "device-bundle: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done

# Everything that can be wrong with the request is refused before anything builds.
if ! git -C "$root" check-ignore -q "${bundle#"$root"/}/"; then
  echo "device-bundle: '${bundle#"$root"/}' is not ignored by git; name it <something>-bundle" >&2
  exit 2
fi
for entry in "${added[@]}"; do
  name=${entry%%=*}
  path=${entry#*=}
  if [[ -z "$name" || "$name" == "$entry" || "$name" == */* ]]; then
    echo "device-bundle: --add wants NAME=PATH with a plain NAME, got '$entry'" >&2
    exit 2
  fi
  if [[ ! -f "$path" || ! -x "$path" ]]; then
    echo "device-bundle: --add $name: '$path' is not an executable file" >&2
    exit 2
  fi
done

# A configure that stopped half way leaves CMakeCache.txt without build.ninja: configure again.
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLATHE_CUDA=ON -DLATHE_CUDA_ARCHS=90a \
    -DLATHE_SHARED_LIBS=ON >/dev/null
fi
if ! grep -q '^LATHE_SHARED_LIBS:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "device-bundle: note: $build is a static build (every executable carries its own CUDA backend," \
    "~19 MB each with --xz); cmake -DLATHE_SHARED_LIBS=ON there bundles one shared copy" >&2
fi
# The executables of this build that the gpu and golden tests run (ctest's commands: a test may
# rerun another's executable under other settings, e.g. gpu_batch_invariance_halves; a command
# outside the build, such as an interpreter, is not ours to bundle), and the benchmark
# executables bench/ declares (not its helper libraries).
tests=$(ctest --test-dir "$build" --show-only=json-v1 -L 'gpu|golden' 2>/dev/null | python3 -c '
import json, os, sys
build = os.path.realpath(sys.argv[1]) + os.sep
commands = [t["command"][0] for t in json.load(sys.stdin)["tests"] if t.get("command")]
print(" ".join(sorted({os.path.basename(c) for c in commands if os.path.realpath(c).startswith(build)})))' "$build")
bench=$(grep -ho 'add_executable(lathe_bench_[a-z_]*' "$root"/bench/*/CMakeLists.txt | sed 's/add_executable(//' |
  sort -u | tr '\n' ' ')
targets="lathe $tests $bench"
if [[ -n "$only" ]]; then targets=$only; fi
echo "device-bundle: building $targets"
# Keep going past targets another area has broken for now; bundle what built.
cmake --build "$build" -j "$jobs" -- -k 0 $targets || echo "device-bundle: some targets failed to build (see above)"

rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
for t in $targets; do
  # The newest match: a build tree may keep a stale executable of the same name elsewhere.
  f=$(find "$build" -type f -name "$t" -perm -u+x -printf '%T@ %p\n' | sort -rn | head -1 | cut -d' ' -f2-)
  if [[ -n "$f" ]]; then
    cp "$f" "$bundle/bin/"
  else
    echo "device-bundle: missing $t"
  fi
done
for entry in "${added[@]}"; do
  name=${entry%%=*}
  path=$(realpath "${entry#*=}")
  own_libs=$({ ldd "$path" 2>/dev/null || true; } | awk '$1 ~ /^liblathe_/ && $3 ~ /^\// {print $3}')
  if [[ -n "$own_libs" ]]; then
    # Its own build's lathe libraries, not the bundle's: beside it in lib/NAME, first on the path.
    mkdir -p "$bundle/lib/$name"
    cp "$path" "$bundle/lib/$name/$name"
    for lib in $own_libs; do cp -L "$lib" "$bundle/lib/$name/"; done
    cat >"$bundle/bin/$name" <<WRAPPER
#!/usr/bin/env bash
# $name, added by device-bundle.sh, with its own build's lathe libraries first on the path.
here=\$(cd "\$(dirname "\$0")" && pwd)
LD_LIBRARY_PATH="\$here/../lib/$name:\${LD_LIBRARY_PATH:-}" exec "\$here/../lib/$name/$name" "\$@"
WRAPPER
    chmod +x "$bundle/bin/$name"
  else
    cp "$path" "$bundle/bin/$name"
  fi
  commit=$(git -C "$(dirname "$path")" rev-parse --short HEAD 2>/dev/null || echo unknown)
  echo "$name <- $path (commit $commit)" >>"$bundle/ADDED"
done
strip --strip-unneeded "$bundle"/bin/* "$bundle"/lib/*/* 2>/dev/null || true

# Shared libraries: everything ldd resolves except the C/C++ runtime, the driver and the CUDA
# math libraries (present on the device).
system_re='^(linux-vdso|ld-linux|libc\.so|libm\.so|libstdc\+\+|libgcc_s|libpthread|libdl\.so|librt\.so|libcuda\.so|libcublas|libcublasLt|libnvidia)'
# An added executable's own folder (lib/NAME) already holds its lathe libraries.
for b in "$bundle"/bin/* "$bundle"/lib/*/*; do
  [[ -f "$b" ]] || continue
  own=$(dirname "$b")
  # (ldd fails on the wrappers, which are scripts.)
  { ldd "$b" 2>/dev/null || true; } | awk '/=> \//{print $1, $3}' | while read -r name path; do
    if [[ ! "$name" =~ $system_re ]] && [[ ! -e "$bundle/lib/$name" ]] && [[ ! -e "$own/$name" ]]; then
      cp -L "$path" "$bundle/lib/$name"
    fi
  done
done
strip --strip-unneeded "$bundle"/lib/* 2>/dev/null || true
if [[ $compress == 1 ]]; then
  find "$bundle/bin" "$bundle/lib" -type f -exec gzip -9 {} +
elif [[ $compress == 2 ]]; then
  find "$bundle/bin" "$bundle/lib" -type f -exec xz -9 -T0 {} +
fi
if [[ $tokenizer == 1 ]]; then
  mkdir -p "$bundle/tokenizer"
  cp "$root/../shared/tokenizers/qwen3/"tokenizer*.json "$bundle/tokenizer/"
  # tokenizer.json is 11 MB of text (~2.5 MB gzipped): with the tree and the binaries it would
  # pass the device tool's 64 MiB carry limit.
  if [[ $compress == 1 ]]; then gzip -9 "$bundle"/tokenizer/*.json; fi
  if [[ $compress == 2 ]]; then xz -9 -T0 "$bundle"/tokenizer/*.json; fi
fi
source_dir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
git -C "${source_dir:-$root}" rev-parse --short HEAD >"$bundle/COMMIT" 2>/dev/null || true
du -sh "$bundle"
ls "$bundle/bin" "$bundle/lib"
# The device tool carries the tracked (and untracked, unignored) files with the bundle, and refuses
# a call whose carry passes 64 MiB before starting a machine: say where this bundle leaves it.
limit_mib=${DEVICE_CARRY_LIMIT_MIB:-64}
tree_bytes=$(cd "$root" && git ls-files -z --cached --others --exclude-standard |
  xargs -0 -r stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
bundle_bytes=$(du -sb "$bundle" | cut -f1)
echo "device carry: $(((tree_bytes + bundle_bytes) >> 20)) MiB of $limit_mib" \
  "(the tree $((tree_bytes >> 20)) MiB, the bundle $((bundle_bytes >> 20)) MiB)"
# The tool's own count runs above this sum (2026-12-07: it refused a carry this sum put at 62.5 MiB
# and took one at 61.2), so the warning starts 2 MiB short of the limit.
if ((tree_bytes + bundle_bytes > (limit_mib - 2) << 20)); then
  echo "device-bundle: warning: the tree and ${bundle#"$root"/} come within 2 MiB of the device tool's" \
    "$limit_mib MiB carry limit, which it counts a little above this sum; bundle fewer --targets or" \
    "leave out --with-tokenizer" >&2
fi
