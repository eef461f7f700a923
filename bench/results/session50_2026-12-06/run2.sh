#!/usr/bin/env bash
# Session 50, call 2: the fp8 shapes where the two-CTA ring's 16-row tier trails cuBLASLt FP8 most
# (8B q|o, 8B down, 8B q|k|v, 32B o), under variants never timed there: the balanced grid (`ringbal`,
# two and three CTAs per SM, and one CTA per SM as c132) with `:wg` / `:xt`, and the ring at other
# K splits (k3, k8). Same bundle as call 1 (p49c-bundle = d538bd7, main's kernels).
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p49c-bundle}"
V=auto,ringbal:wg:xt,ringbal:wg,ringbal:b3:wg:xt,ringbal:c132:wg:xt,auto:k3,auto:k8,auto:k8:xt
for shape in qwen3-8b/q/o qwen3-8b/down qwen3-8b/qkv qwen3-32b/o_proj; do
  variant_rows $shape $V 1,4,16
done
cat $S
