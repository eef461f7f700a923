#!/usr/bin/env bash
# Run HERE. Builds the attention GPU test and the attention benchmark (and `lathe` with
# ATTN_BUNDLE_LATHE=1) in a CUDA build directory (default build-attn-cuda) and packs them with
# their non-system shared libraries into attn-bundle/{bin,lib} for bench/attention/device_run.sh
# (carry ["attn-bundle"]).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-attn-cuda}
bundle=$root/attn-bundle
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLATHE_CUDA=ON -DLATHE_CUDA_ARCHS=90a >/dev/null
targets="gpu_attention lathe_bench_attention"
[[ -n "${ATTN_BUNDLE_LATHE:-}" ]] && targets="$targets lathe"
# shellcheck disable=SC2086
cmake --build "$build" -j 2 -- -k 0 $targets || echo "bundle: some targets failed"
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
for t in $targets; do
  f=$(find "$build" -type f -name "$t" -perm -u+x | head -1)
  if [[ -n "$f" ]]; then cp "$f" "$bundle/bin/"; else echo "bundle: missing $t"; fi
done
strip --strip-unneeded "$bundle"/bin/* 2>/dev/null || true
system_re='^(linux-vdso|ld-linux|libc\.so|libm\.so|libstdc\+\+|libgcc_s|libpthread|libdl\.so|librt\.so|libcuda\.so|libcublas|libcublasLt|libnvidia)'
for b in "$bundle"/bin/*; do
  ldd "$b" 2>/dev/null | awk '/=> \//{print $1, $3}' | while read -r name path; do
    if [[ ! "$name" =~ $system_re ]] && [[ ! -e "$bundle/lib/$name" ]]; then cp -L "$path" "$bundle/lib/$name"; fi
  done
done
# The binaries travel gzipped (the kernel variants make them ~15 MB each); device_run.sh unpacks.
gzip -9 "$bundle"/bin/*
git -C "$root" rev-parse --short HEAD >"$bundle/COMMIT"
du -sh "$bundle"
