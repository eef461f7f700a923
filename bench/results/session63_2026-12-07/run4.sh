#!/usr/bin/env bash
# Session 63, call 3 as run: run3.sh, preceded on an H200 (the issues' device) by run2.sh (main's
# status-row tables and steps, into $OUT/h200).
set -uo pipefail
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  (OUT=$OUT/h200; mkdir -p $OUT; bash bench/results/session63_2026-12-07/run2.sh)
fi
bash bench/results/session63_2026-12-07/run3.sh
