#!/usr/bin/env bash
# Unpacks a device bundle in place (scripts/device-bundle.sh --gzip or --xz): every bin/*, lib/*,
# lib/*/* (an added executable's own folder) and tokenizer/* file ending in .gz or .xz, then gives
# bin/* and lib/*/* their execute bit back (a binary added
# by hand as `gzip -c BIN > bin/NAME.gz` arrives without it). Without an xz binary the .xz files
# are read with Python's lzma module. Safe to run twice.
# Usage: scripts/bundle-unpack.sh BUNDLE_DIR
set -uo pipefail
bundle=${1:?usage: scripts/bundle-unpack.sh BUNDLE_DIR}
status=0
for f in "$bundle"/bin/* "$bundle"/lib/* "$bundle"/lib/*/* "$bundle"/tokenizer/*; do
  [[ -f "$f" ]] || continue
  case "$f" in
    *.gz) gunzip -f "$f" || status=1 ;;
    *.xz)
      if command -v xz >/dev/null 2>&1; then
        xz -d -f "$f" || status=1
      else
        python3 -c 'import lzma, shutil, sys
with lzma.open(sys.argv[1]) as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)' "$f" "${f%.xz}" && rm -f "$f" || status=1
      fi
      ;;
  esac
done
for f in "$bundle"/bin/* "$bundle"/lib/*/*; do [[ -f "$f" ]] && chmod +x "$f"; done
exit $status
