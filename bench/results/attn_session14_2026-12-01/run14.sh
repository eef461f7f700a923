#!/usr/bin/env bash
# Session 14 call 14: lathe_probe_kv_walk with the cells in another order (is the first cell slow?).
cd "$(dirname "$0")/.."
for f in ab-bundle/bin/*.gz ab-bundle/lib/*.gz; do [[ -e "$f" ]] && gunzip -f "$f"; done
chmod +x ab-bundle/bin/*
export LD_LIBRARY_PATH="$PWD/ab-bundle/lib:/usr/local/cuda/lib64"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 60 ab-bundle/bin/lathe_probe_kv_walk 16 4096 1 65536 1 65536 16 4096 1 16384
