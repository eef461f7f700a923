#!/usr/bin/env bash
# Run HERE. Builds the GEMV GPU test and the kernel benchmark in a CUDA build directory (default
# build-gemv) and packs them with their non-system shared libraries into gemv-bundle/{bin,lib}
# for bench/kernels/device_run.sh (device tool, carry ["gemv-bundle"]).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-gemv}
bundle=$root/gemv-bundle
targets="gpu_cuda_gemv_test lathe_bench_kernels"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLATHE_CUDA=ON -DLATHE_CUDA_ARCHS=90a >/dev/null
cmake --build "$build" -j 2 -- $targets
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib"
for t in $targets; do
  f=$(find "$build" -type f -name "$t" -perm -u+x | head -1)
  if [[ -n "$f" ]]; then cp "$f" "$bundle/bin/"; else echo "bundle: missing $t"; exit 1; fi
done
strip --strip-unneeded "$bundle"/bin/* 2>/dev/null || true
system_re='^(linux-vdso|ld-linux|libc\.so|libm\.so|libstdc\+\+|libgcc_s|libpthread|libdl\.so|librt\.so|libcuda\.so|libcublas|libcublasLt|libnvidia)'
for b in "$bundle"/bin/*; do
  ldd "$b" 2>/dev/null | awk '/=> \//{print $1, $3}' | while read -r name path; do
    if [[ ! "$name" =~ $system_re ]] && [[ ! -e "$bundle/lib/$name" ]]; then cp -L "$path" "$bundle/lib/$name"; fi
  done
done
strip --strip-unneeded "$bundle"/lib/* 2>/dev/null || true
{ git -C "$root" rev-parse --short HEAD; git -C "$root" status --porcelain -- src/backends/cuda bench/kernels tests/gpu/cuda | sed 's/^/dirty: /'; } >"$bundle/COMMIT"
du -sh "$bundle"
