#!/usr/bin/env python3
"""Hugging Face transformers generate() on a model directory's shapes with random weights.

The peer measurement beside `lathe bench latency ... --load-format dummy`: the same config.json
(a configs/ directory, or any checkpoint directory: only config.json is read, nothing is
downloaded), random weights in BF16 (transformers' own init: normal, std initializer_range), a
random prompt of --prompt-len ids, greedy decoding of exactly --new-tokens tokens (EOS cannot
stop it: min_new_tokens = max_new_tokens), in two modes:

  eager            the default dynamic cache, no compilation;
  static-compiled  cache_implementation="static", compiled by generate()'s automatic
                   compilation of the decode forward (torch.compile, its CompileConfig defaults:
                   mode "reduce-overhead", i.e. CUDA graphs), or with --compile explicit,
                   model.forward = torch.compile(mode="reduce-overhead", fullgraph=True).

TPOT = (time(new_tokens + 1 tokens) - time(1 token)) / new_tokens, each time the median of
--repeats timed generate() calls after warm-up (/work/shared/baselines/README.md), so prefill and
the first token cancel out. FP8 directories (a quantization_config) are run in BF16: the
quantization_config is dropped, with a note, since this compares BF16 shapes.

Example (device machine):
  python3 tools/peers/hf_generate.py configs/Qwen3-8B --batch-sizes 1,4,16 --out hf-qwen3-8b.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model_dir", type=Path, help="directory with config.json (e.g. configs/Qwen3-8B)")
    p.add_argument("--batch-sizes", default="1,4,16", help="comma-separated batch sizes (default 1,4,16)")
    p.add_argument("--prompt-len", type=int, default=128, help="prompt tokens per sequence (default 128)")
    p.add_argument("--new-tokens", type=int, default=64, help="N in TPOT = (t(N+1) - t(1)) / N (default 64)")
    p.add_argument("--modes", default="eager,static-compiled", help="eager, static-compiled (default both)")
    p.add_argument("--compile", choices=["auto", "explicit"], default="auto",
                   help="static-compiled: generate()'s automatic compile (auto) or torch.compile(model.forward)")
    p.add_argument("--device", default="cuda", help="torch device (default cuda; cpu for a smoke test)")
    p.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    p.add_argument("--repeats", type=int, default=5, help="timed generate() calls per length (median)")
    p.add_argument("--warmup", type=int, default=2, help="untimed generate() calls per (mode, batch)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-layers", type=int, default=0, help="override num_hidden_layers (0: the config's)")
    p.add_argument("--label", default="", help="name in the report lines (default: the directory name)")
    p.add_argument("--out", type=Path, help="write the results as JSON")
    args = p.parse_args(argv)
    try:
        args.batch_sizes = [int(x) for x in args.batch_sizes.split(",") if x.strip()]
    except ValueError:
        p.error(f"--batch-sizes: expected comma-separated integers, got {args.batch_sizes!r}")
    if not args.batch_sizes or min(args.batch_sizes) < 1:
        p.error("--batch-sizes: every batch size must be >= 1")
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    for m in args.modes:
        if m not in ("eager", "static-compiled"):
            p.error(f"--modes: unknown mode {m!r} (expected eager, static-compiled)")
    for name in ("prompt_len", "new_tokens", "repeats"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if not (args.model_dir / "config.json").is_file():
        p.error(f"{args.model_dir}/config.json does not exist")
    return args


def load_config(args: argparse.Namespace):
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(str(args.model_dir), local_files_only=True)
    notes = []
    if getattr(config, "quantization_config", None):
        notes.append("quantization_config dropped: HF runs these shapes in " + args.dtype)
        config.quantization_config = None
        try:
            delattr(config, "quantization_config")
        except AttributeError:
            pass
    if args.num_layers > 0:
        notes.append(f"num_hidden_layers {config.num_hidden_layers} -> {args.num_layers}")
        config.num_hidden_layers = args.num_layers
        if getattr(config, "layer_types", None):
            config.layer_types = config.layer_types[: args.num_layers]
        if hasattr(config, "max_window_layers"):
            config.max_window_layers = min(config.max_window_layers, args.num_layers)
    return config, notes


def build_model(config, args: argparse.Namespace):
    import torch
    from transformers import AutoModelForCausalLM

    dtype = getattr(torch, args.dtype)
    torch.manual_seed(args.seed)
    with torch.device(args.device):
        try:
            model = AutoModelForCausalLM.from_config(config, dtype=dtype)
        except TypeError:  # transformers < 4.56 spells it torch_dtype
            model = AutoModelForCausalLM.from_config(config, torch_dtype=dtype)
    model.eval()
    return model


def synchronize(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def generate_once(model, input_ids, attention_mask, new_tokens: int, mode: str, args) -> float:
    """Seconds for one generate() call of exactly new_tokens tokens."""
    import torch

    kwargs = dict(
        attention_mask=attention_mask,
        max_new_tokens=new_tokens,
        min_new_tokens=new_tokens,
        do_sample=False,
        pad_token_id=0,
    )
    if mode == "static-compiled":
        kwargs["cache_implementation"] = "static"
        if args.compile == "explicit":
            kwargs["disable_compile"] = True
    with torch.inference_mode():
        synchronize(args.device)
        start = time.perf_counter()
        out = model.generate(input_ids, **kwargs)
        synchronize(args.device)
        elapsed = time.perf_counter() - start
    produced = out.shape[1] - input_ids.shape[1]
    if produced != new_tokens:
        raise RuntimeError(f"generate() produced {produced} tokens, expected {new_tokens}")
    return elapsed


def measure(model, config, args, mode: str, batch: int) -> dict:
    import torch

    gen = torch.Generator().manual_seed(args.seed * 1000 + batch)
    vocab = min(int(config.vocab_size), 151643)  # Qwen3's ordinary ids end at 151643
    input_ids = torch.randint(0, vocab, (batch, args.prompt_len), generator=gen).to(args.device)
    attention_mask = torch.ones_like(input_ids)
    n = args.new_tokens
    for _ in range(args.warmup):
        generate_once(model, input_ids, attention_mask, n + 1, mode, args)
        generate_once(model, input_ids, attention_mask, 1, mode, args)
    t1 = [generate_once(model, input_ids, attention_mask, 1, mode, args) for _ in range(args.repeats)]
    tn = [generate_once(model, input_ids, attention_mask, n + 1, mode, args) for _ in range(args.repeats)]
    first = statistics.median(t1)
    full = statistics.median(tn)
    tpot = (full - first) / n
    return {
        "mode": mode,
        "batch": batch,
        "prompt_len": args.prompt_len,
        "new_tokens": n,
        "prefill_plus_1_ms": first * 1e3,
        "generate_n_plus_1_ms": full * 1e3,
        "tpot_ms": tpot * 1e3,
        "agg_tok_s": batch / tpot if tpot > 0 else None,
        "t1_all_ms": [t * 1e3 for t in t1],
        "tn_all_ms": [t * 1e3 for t in tn],
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch
    import transformers

    label = args.label or args.model_dir.name.lower()
    config, notes = load_config(args)
    start = time.perf_counter()
    model = build_model(config, args)
    init_s = time.perf_counter() - start
    params = sum(p.numel() for p in model.parameters())
    print(f"[{label}] init {init_s:.1f}s params {params / 1e9:.2f}B dtype {args.dtype} device {args.device} "
          f"torch {torch.__version__} transformers {transformers.__version__}", flush=True)
    if args.device == "cpu" and args.compile == "auto" and "static-compiled" in args.modes:
        notes.append("generate() compiles automatically only on accelerators: static-compiled runs uncompiled on cpu")
    for note in notes:
        print(f"[{label}] note: {note}", flush=True)

    compiled_forward = False
    rows = []
    for mode in args.modes:
        if mode == "static-compiled" and args.compile == "explicit" and not compiled_forward:
            model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
            compiled_forward = True
        for batch in args.batch_sizes:
            r = measure(model, config, args, mode, batch)
            rows.append(r)
            agg = f"{r['agg_tok_s']:9.1f}" if r["agg_tok_s"] else "      n/a"
            print(f"[{label}] {mode:<16} B={batch:3d} prompt={args.prompt_len} prefill+1={r['prefill_plus_1_ms']:8.1f} ms"
                  f"  TPOT={r['tpot_ms']:8.2f} ms  agg={agg} tok/s", flush=True)

    if args.out:
        report = {
            "tool": "tools/peers/hf_generate.py",
            "model_dir": str(args.model_dir),
            "label": label,
            "params": params,
            "init_s": init_s,
            "dtype": args.dtype,
            "device": args.device,
            "device_name": torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu",
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "compile": args.compile,
            "tpot_definition": "(t(N+1 tokens) - t(1 token)) / N, medians over repeats",
            "notes": notes,
            "rows": rows,
        }
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
