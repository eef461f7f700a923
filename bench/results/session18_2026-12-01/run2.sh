# Session 18, call 2: is the slow Qwen3-32B batch-3/4 step (early weight reads on) a clock/power
# effect? Long decodes (128 steps) at batch 4 with early reads on (default) and off, the GPU's SM
# clock, power and throttle reasons sampled every 20 ms; the last 3 s before each process ends
# (its decode) are summarised.
set -uo pipefail
b=$PWD/perf-bundle
for f in $b/bin/*.gz $b/lib/*.gz; do [[ -e $f ]] && gunzip -f "$f"; done
chmod +x $b/bin/*
export LD_LIBRARY_PATH="$b/lib:/usr/local/cuda/lib64"
S=$OUT/summary.txt; W=/tmp/work; mkdir -p $W
echo "main $(cat $b/COMMIT)" >$S
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv,noheader,nounits -lms 20 >$W/smi.csv 2>&1 &
smi=$!
step() {  # tag, model, batches, env...
  local tag=$1 model=$2 batches=$3; shift 3
  env "$@" timeout 120 $b/bin/lathe bench latency configs/$model --load-format dummy --device cuda --batch-sizes $batches \
    --input-len 1024 --output-len 128 --out $W/s_$tag.json >$W/s_$tag.txt 2>$W/s_$tag.log
  local rc=$?
  echo "$tag $(date '+%Y/%m/%d %H:%M:%S.%N')" >>$W/ends.txt
  printf '%-22s rc=%s %s\n' "$tag" "$rc" "$(awk '$1 ~ /^[0-9]+$/ && NF > 8 {printf "B%s %s (avg %s)  ", $1, $4, $5}' $W/s_$tag.txt)" >>$S
}
step 32bf16_b4_default Qwen3-32B 4
step 32bf16_b4_off Qwen3-32B 4 LATHE_GEMV_EARLY_WEIGHTS=off
step 32bf16_b2_default Qwen3-32B 2
step 32fp8_b4_default Qwen3-32B-FP8 4
step 32fp8_b4_off Qwen3-32B-FP8 4 LATHE_GEMV_EARLY_WEIGHTS=off
step 32bf16_b4_default_r2 Qwen3-32B 4
step 32bf16_b4_earlykv_off Qwen3-32B 4 LATHE_ATTN_EARLY_KV=off
step 32bf16_b4_attn16 Qwen3-32B 4 LATHE_ATTN_SPLITK_KERNEL=16
kill $smi
python3 - "$W" >>$S <<'PY'
import sys, datetime, collections
w = sys.argv[1]
def t(s): return datetime.datetime.strptime(s.strip()[:26], "%Y/%m/%d %H:%M:%S.%f")
rows = []
for line in open(f"{w}/smi.csv"):
    p = [x.strip() for x in line.split(",")]
    if len(p) < 6: continue
    try: rows.append((t(p[0]), float(p[1]), float(p[2]), float(p[3]), float(p[4]), p[5]))
    except ValueError: pass
for line in open(f"{w}/ends.txt"):
    tag, rest = line.split(" ", 1)
    end = t(rest)
    win = [r for r in rows if 0.3 <= (end - r[0]).total_seconds() <= 3.0]
    if not win: print(tag, "no samples"); continue
    sm = sorted(r[1] for r in win); pw = sorted(r[3] for r in win)
    reasons = collections.Counter(r[5] for r in win)
    print(f"{tag:24s} n={len(win)} sm MHz min/med/max {sm[0]:.0f}/{sm[len(sm)//2]:.0f}/{sm[-1]:.0f} "
          f"power W med/max {pw[len(pw)//2]:.0f}/{pw[-1]:.0f} temp {win[-1][4]:.0f} reasons {dict(reasons)}")
PY
tar czf $OUT/work.tgz -C $W .
cat $S
