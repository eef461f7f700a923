#!/usr/bin/env bash
# Copies what a device call brought back (the device tool's files_at folder, read-only) into the
# repository's raw results: DEST gets every file and folder of SRC, made writable; each
# work.tar.xz (a run script's $W, tarred because the tool brings back at most two folders down) is
# unpacked into a work/ beside it and removed; and every GPU test log (.txt or .log with gtest's
# "[==========]" or "[ RUN      ]" lines) is stored xz-compressed as NAME.xz, the convention of
# bench/results/README.md (the device tool carries the tracked tree with every call).
# Usage: scripts/results-import.sh SRC DEST   (DEST must not exist yet, or be empty)
set -euo pipefail
src=${1:?usage: scripts/results-import.sh SRC DEST}
dest=${2:?usage: scripts/results-import.sh SRC DEST}
[[ -d "$src" ]] || { echo "results-import: $src is not a folder" >&2; exit 2; }
if [[ -e "$dest" ]] && [[ -n "$(ls -A "$dest" 2>/dev/null)" ]]; then
  echo "results-import: $dest exists and is not empty; not overwriting it" >&2
  exit 2
fi
mkdir -p "$dest"
cp -r "$src"/. "$dest"/
chmod -R u+w "$dest"
while IFS= read -r -d '' tarball; do
  work="$(dirname "$tarball")/work"
  mkdir -p "$work"
  tar -C "$work" -xJf "$tarball"
  rm -f "$tarball"
done < <(find "$dest" -name work.tar.xz -type f -print0)
logs=0
while IFS= read -r -d '' log; do
  if grep -q -E '^\[==========\]|^\[ RUN      \]' "$log"; then
    xz -9 -f "$log"
    logs=$((logs + 1))
  fi
done < <(find "$dest" -type f \( -name '*.txt' -o -name '*.log' \) -print0)
echo "results-import: $(find "$dest" -type f | wc -l) files in $dest ($(du -sh "$dest" | cut -f1)), $logs GPU test logs compressed"
