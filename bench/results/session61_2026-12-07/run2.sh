#!/usr/bin/env bash
# Session 61, call 2 (bundle p61-bundle = main 99c5d22), any H100/H200. Arithmetic-neutral levers
# per tier: the ring depth (stages) and ":wgn" change no row's sums, so tiers 1 and 4 could take
# them while the 16- and 32-row tiers keep theirs, and rows stay byte-equal across tiers. Kernel
# rows of the fp8 gate|up shapes (Qwen3-32B and Qwen3.5-27B on the balanced grid, Qwen3-8B on the
# three-CTA ring) under auto, auto:s4, auto:wgn, auto:wgn:s4 and auto:b3 (three CTAs per SM: on the
# balanced grid another segmentation, so other bytes) at 1, 4 and 16 rows, twice; then the other
# Qwen3-32B shapes at 1 and 4 rows.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p61-bundle}"
for r in 1 2; do
  variant_rows gate_up "auto,auto:s4,auto:wgn,auto:wgn:s4,auto:b3" 1,4,16
  mv $W/variants_gate_up.txt $W/variants_gate_up_r$r.txt
done
variant_rows qwen3-32b/ "auto,auto:s4,auto:wgn:s4" 1,4
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
