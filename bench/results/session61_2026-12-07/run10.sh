#!/usr/bin/env bash
# Session 61, call 10 (bundle p61d-bundle). On the register ring (one CTA per row block and K
# split) the CTAs per SM change no row's sums at a fixed K split, so each tier could take its own
# count and rows stay byte-equal across tiers. Kernel rows at 1, 4, 8 and 16 rows of the two-CTA
# ring's fp8 shapes: auto against the same K split at three CTAs per SM (80 registers) with and
# without x by tensor copies in the 16-row tier (":xt"), and auto with ":xt" at two, two processes.
set -uo pipefail
source scripts/bundle-env.sh "${BUNDLE:-p61d-bundle}"
shapes=("qwen3-8b/qkv:k5" "qwen3-8b/q/o:k5" "qwen3-8b/down:k8" "qwen3-32b/qkv:k3" "qwen3-32b/q_proj:k4"
        "qwen3-32b/o_proj:k6" "qwen3-32b/down:k6")
for r in 1 2; do
  for sk in "${shapes[@]}"; do
    only=${sk%:*} k=${sk##*:}
    variant_rows "$only" "auto,ring:$k:g16:b3:wg:wgn:xt,ring:$k:g16:b3:wg:wgn,auto:xt" 1,4,8,16
    mv $W/variants_${only//\//_}.txt $W/b3_${only//\//_}_r$r.txt
  done
done
tar -C $W -cJf $OUT/work.tar.xz .
cat $S
