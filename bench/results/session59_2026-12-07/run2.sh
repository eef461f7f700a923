#!/usr/bin/env bash
# Session 59, the short form of run1.sh for the device time left after failed starts (bundle
# p59-bundle = main 94e7661): the issue-5 tables with PyTorch SDPA in the same call (batch 1 from the
# target's declaration: `h200` auto slices for both dtypes; `h100` none for BF16, `fp8:auto:2`) and
# the fp8 GEMV decode-width table with cuBLASLt FP8 in the same process.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p59-bundle}"
declared_issue5_tables
fp8_table
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
