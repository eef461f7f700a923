#!/usr/bin/env python3
"""scripts/bundle-env.sh's helpers on a stub bundle (gtest binaries, lathe_bench_kernels and lathe
replaced by shell scripts): decode_suites records each suite's verdict in the summary, fp8_table
leaves the table in $OUT and its summary in the summary file, variant_rows keeps the " v:" rows as
shape, width, variant and % of the ceiling, step_latency records the batch times and passes
BATCHES as the batch sizes (1,4,16,32 unset), and step_arm runs an arm only while the elapsed time is
under LIMIT, and auto_rows passes its variables and widths to the benchmark and keeps its rows under
a header naming the model and tag; floor_sweep and slice_floor_ab (through attn_bench) run one
attention benchmark per arm under that arm's variables, into its own directory, with one summary
line each; gpu_suite passes VAR=VALUE words as variables and the rest as the binary's arguments,
and counts the tests that passed, also when the suite is cut off; declared_issue5_tables takes batch
1's policies from the GPU's target declaration (an H200: slices for both KV dtypes; else the h100
one: whole BF16 splits, FP8 under --slices auto:2)."""
import os
import subprocess
import sys
import tempfile

from script_test_support import ROOT, report, write_executable

GTEST = '#!/bin/sh\necho "[  PASSED  ] 3 tests."\n'
# A gtest stand-in that records its environment variable and arguments.
GTEST_ARGS = '#!/bin/sh\necho "var=$LATHE_X $*" >>"$OUT/gtest_args"\necho "[  PASSED  ] 1 test."\n'
# A gtest stand-in cut off after two tests passed (the exit status of `timeout`).
GTEST_CUT = ('#!/bin/sh\necho "[ RUN      ] A.b"\necho "[       OK ] A.b (5 ms)"\n'
             'echo "[ RUN      ] A.c"\necho "[       OK ] A.c (5 ms)"\necho "[ RUN      ] A.d"\nexit 124\n')
KERNELS = """#!/bin/sh
echo "split=$LATHE_GEMV_SPLIT_SUM $*" >>"$OUT/kernels_args"
echo "read ceiling: best 3191 GB/s, median 3170 GB/s"
echo "qwen3-32b    gate_up   51200  5120 fp8    16 v:auto                 1.0    2614  81.9%"
echo "summary"
echo "qwen3-32b gate_up fp8 ours m=1 93.0%"
"""
ATTENTION = """#!/bin/sh
echo "floor=$LATHE_ATTN_MIN_KV_PER_SPLIT rule=$LATHE_ATTN_SPLIT_RULE slice=$LATHE_ATTN_MIN_KV_PER_SLICE $*" >>"$OUT/attention_args"
echo "read ceiling: 3190 GB/s (best of 10, 4 GiB)"
"""
LATHE = ('#!/bin/sh\necho "$@" >>"$OUT/lathe_args"\n'
         'echo "batch p50 p90 mean"\necho "1 a b 12.900"\necho "4 a b 13.950"\n')


def run(bundle, out, body, limit, batches=None, path_first=None):
    script = f'source scripts/bundle-env.sh "{bundle}"\n{body}\n'
    env = dict(os.environ, OUT=out, LIMIT=str(limit))
    if path_first is not None:
        env["PATH"] = path_first + os.pathsep + env["PATH"]
    env.pop("BATCHES", None)
    if batches is not None:
        env["BATCHES"] = batches
    return subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        bundle = os.path.join(tmp, "bundle")
        os.makedirs(os.path.join(bundle, "bin"))
        os.makedirs(os.path.join(bundle, "lib"))
        with open(os.path.join(bundle, "COMMIT"), "w") as f:
            f.write("abc1234\n")
        for name in ("gpu_cuda_gemv_test", "gpu_cuda_op_test", "gpu_batch_invariance", "gpu_golden_qwen3"):
            write_executable(os.path.join(bundle, "bin", name), GTEST)
        write_executable(os.path.join(bundle, "bin", "gpu_attention"), GTEST_ARGS)
        write_executable(os.path.join(bundle, "bin", "gpu_cut"), GTEST_CUT)
        write_executable(os.path.join(bundle, "bin", "lathe_bench_kernels"), KERNELS)
        write_executable(os.path.join(bundle, "bin", "lathe"), LATHE)
        write_executable(os.path.join(bundle, "bin", "lathe_bench_attention"), ATTENTION)

        out = os.path.join(tmp, "out")
        os.makedirs(out)
        body = ("decode_suites\nfp8_table\nvariant_rows qwen3-32b/gate_up auto,ringbal:wg:xt 16\n"
                "step_arm first Qwen3-8B-FP8 ''")
        r = run(bundle, out, body, limit=400)
        path = os.path.join(out, "summary.txt")
        summary = open(path).read() if os.path.exists(path) else ""
        if r.returncode != 0:
            failures.append(f"helpers exited {r.returncode}: {r.stderr[-400:]}")
        if not summary.startswith("commit abc1234"):
            failures.append("summary does not begin with the bundle's commit")
        for tag in ("gemv", "op", "invariance", "golden"):
            if f"{tag} rc=0 [  PASSED  ] 3 tests." not in summary:
                failures.append(f"no verdict line for suite {tag}")
        if not os.path.exists(os.path.join(out, "table_fp8.txt")):
            failures.append("fp8_table left no $OUT/table_fp8.txt")
        if "table fp8 rc=0" not in summary or "qwen3-32b gate_up fp8 ours m=1 93.0%" not in summary:
            failures.append("fp8_table's verdict or summary missing from the summary")
        row = "qwen3-32b gate_up 16 v:auto 1.0 2614 81.9%"
        if "== qwen3-32b/gate_up rc=0" not in summary or row not in summary:
            failures.append("variant_rows' header or row (shape, width, variant, time, GB/s, %) missing")
        if "latency first rc=0 B1 12.900 ms  B4 13.950 ms" not in summary:
            failures.append("step_arm under LIMIT did not record the step times")

        out2 = os.path.join(tmp, "out2")
        os.makedirs(out2)
        r = run(bundle, out2, "step_arm late Qwen3-8B-FP8 ''; true", limit=0)
        summary2 = open(os.path.join(out2, "summary.txt")).read()
        if "latency late" in summary2:
            failures.append("step_arm ran past LIMIT=0")
        if "--batch-sizes 1,4,16,32 " not in open(os.path.join(out, "lathe_args")).read():
            failures.append("step_latency without BATCHES did not ask for batch 1,4,16,32")

        out4 = os.path.join(tmp, "out4")
        os.makedirs(out4)
        run(bundle, out4, "auto_rows off_r1 qwen3-32b 8,16 LATHE_GEMV_SPLIT_SUM=off", limit=400)
        summary4 = open(os.path.join(out4, "summary.txt")).read()
        if "== qwen3-32b off_r1 rc=0" not in summary4 or row not in summary4:
            failures.append("auto_rows' header or row missing from the summary")
        args4 = open(os.path.join(out4, "kernels_args")).read()
        if not args4.startswith("split=off ") or "--only qwen3-32b" not in args4 or "--widths 8,16" not in args4:
            failures.append(f"auto_rows did not pass its variable, model and widths: {args4!r}")

        out3 = os.path.join(tmp, "out3")
        os.makedirs(out3)
        run(bundle, out3, "step_latency eight Qwen3-8B-FP8 ''", limit=400, batches="8,12")
        if "--batch-sizes 8,12 " not in open(os.path.join(out3, "lathe_args")).read():
            failures.append("step_latency did not pass BATCHES=8,12 as the batch sizes")

        out5 = os.path.join(tmp, "out5")
        os.makedirs(out5)
        run(bundle, out5, "floor_sweep\nslice_floor_ab auto:2", limit=400)
        summary5 = open(os.path.join(out5, "summary.txt")).read()
        args5 = open(os.path.join(out5, "attention_args")).read().splitlines()
        ceiling = "read ceiling: 3190 GB/s"
        for tag, dirname, variables in (("floor 128 seed", "floor_128_seed", "floor=128 rule=seed slice= "),
                                        ("floor 512 even", "floor_512_even", "floor=512 rule=even slice= "),
                                        ("slice floor 256 r1", "slicefloor_256_r1", "floor= rule= slice=256 "),
                                        ("slice floor 128 r2", "slicefloor_128_r2", "floor= rule= slice=128 ")):
            if not any(line.startswith(f"== {tag} rc=0 ") and ceiling in line for line in summary5.splitlines()):
                failures.append(f"no summary line with the ceiling for {tag}")
            line = next((a for a in args5 if f"--out {os.path.join(out5, 'work', dirname)} " in a), "")
            if not line.startswith(variables):
                failures.append(f"{tag} did not run under {variables.strip()}: {line!r}")
            if not os.path.exists(os.path.join(out5, "work", dirname, "bench.txt")):
                failures.append(f"{tag} left no bench.txt in its directory")
        slice_runs = [a for a in args5 if a.startswith("floor= ")]
        if len(args5) != 8 or len(slice_runs) != 4 or not all("--slices auto:2 --dtypes fp8" in a for a in slice_runs):
            failures.append(f"expected 4 floor and 4 slice-floor runs, the latter with --slices auto:2: {args5!r}")

        out6 = os.path.join(tmp, "out6")
        os.makedirs(out6)
        run(bundle, out6, "gpu_suite bytes gpu_attention LATHE_X=7 --gtest_filter='*Cap*:Det.*'", limit=400)
        args6 = open(os.path.join(out6, "gtest_args")).read().strip()
        if args6 != "var=7 --gtest_filter=*Cap*:Det.*":
            failures.append(f"gpu_suite did not split its variables from its arguments: {args6!r}")
        if "bytes rc=0 [  PASSED  ] 1 test. ok=0 " not in open(os.path.join(out6, "summary.txt")).read():
            failures.append("gpu_suite with arguments left no verdict line")

        declarations = (("NVIDIA H200", False, "auto+pack+slices", "auto+pack+slices"),
                        ("NVIDIA H100 80GB HBM3", True, "auto+pack", "auto+pack+slicesauto:2"))
        for gpu, slices, b1_bf16, b1_fp8 in declarations:
            stubs = os.path.join(tmp, "smi_" + gpu.split()[1])
            os.makedirs(stubs)
            write_executable(os.path.join(stubs, "nvidia-smi"), f'#!/bin/sh\necho "{gpu}"\n')
            out8 = os.path.join(tmp, "out8_" + gpu.split()[1])
            os.makedirs(out8)
            run(bundle, out8, "declared_issue5_tables", limit=400, path_first=stubs)
            serve = [a for a in open(os.path.join(out8, "attention_args")).read().splitlines()
                     if "--kernels serve --policies auto+pack,auto+pack+slices" in a]
            summary8 = open(os.path.join(out8, "summary.txt")).read()
            if len(serve) != 1 or ("--slices auto:2" in serve[0]) != slices:
                failures.append(f"declared_issue5_tables on {gpu}: serve run {serve!r}")
            if (f"== targets bf16 auto+pack (batch 1: {b1_bf16})" not in summary8
                    or f"== targets fp8 auto+pack (batch 1: {b1_fp8})" not in summary8):
                failures.append(f"declared_issue5_tables on {gpu}: batch-1 policies not as declared")

        out7 = os.path.join(tmp, "out7")
        os.makedirs(out7)
        run(bundle, out7, "gpu_suite cut gpu_cut", limit=400)
        if "cut rc=124 ok=2 " not in open(os.path.join(out7, "summary.txt")).read():
            failures.append("a suite cut off after two tests does not report rc=124 ok=2")
    return report("bundle_env_test", failures)


if __name__ == "__main__":
    sys.exit(main())
