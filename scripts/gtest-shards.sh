#!/usr/bin/env bash
# Runs a gtest binary as SHARDS gtest shards side by side (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX),
# each under `timeout TIMEOUT`, collects their output into LOG (one file, shard after shard) and
# prints one line: "rc=R passed P, failed F (S shards)", R the last nonzero shard status (0 if none),
# P and F summed over the shards' gtest totals. Extra arguments go to every shard.
# Usage: scripts/gtest-shards.sh BIN SHARDS TIMEOUT LOG [gtest arguments...]
set -uo pipefail
bin=${1:?usage: scripts/gtest-shards.sh BIN SHARDS TIMEOUT LOG [args...]}
shards=${2:?shards}
limit=${3:?timeout seconds}
log=${4:?log file}
shift 4
pids=()
for ((i = 0; i < shards; ++i)); do
  GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout "$limit" "$bin" "$@" >"$log.$i" 2>&1 &
  pids+=($!)
done
rc=0
for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
: >"$log"
for ((i = 0; i < shards; ++i)); do cat "$log.$i" >>"$log" && rm -f "$log.$i"; done
passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' "$log" | awk '{n += $1} END {print n + 0}')
failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\?, listed below.*/\1/p' "$log" | awk '{n += $1} END {print n + 0}')
echo "rc=$rc passed $passed, failed $failed ($shards shards)"
