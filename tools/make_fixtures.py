#!/usr/bin/env python3
"""Writes the tiny Qwen3 golden fixtures under tests/fixtures/models/ with HF references.

Each fixture is a Hugging Face model directory (config.json, generation_config.json, weights as
model.safetensors or shards + model.safetensors.index.json) plus:
  reference.safetensors  float32 references computed by transformers' Qwen3ForCausalLM
      logits          F32 [T, V]  logits at every prompt position
      prompt_ids      I32 [T]
      greedy_ids      I32 [N]     greedy continuation (no eos stop), full recompute per step
      greedy_logits   F32 [N, V]  logits that chose greedy_ids[i] (row 0 == logits[T-1])
      greedy_margins  F32 [N]     top-1 minus top-2 logit of each greedy step
  meta.json              what the fixture covers, seed, versions, prompt/greedy ids, margins

Reference semantics: the model runs in float32 with attn_implementation="eager" after every
weight was rounded to bf16 (weights are stored as BF16). FP8 fixtures store F8_E4M3 weights
with their scales and the reference runs the DEQUANTIZED weights w = float(fp8) * float(scale)
in float32 with unquantized activations (W8A16). HF's own fp8 integration would quantize
activations too (W8A8); that is NOT what these references compute.

Usage: python3 tools/make_fixtures.py [--out tests/fixtures/models] [--only NAME ...]
The output is deterministic for a given torch/transformers version (seeded CPU generator).
"""
import argparse
import json
import math
import shutil
from pathlib import Path

import torch
import transformers
from safetensors.torch import save_file
from transformers import AutoConfig, Qwen3ForCausalLM

REPO = Path(__file__).resolve().parent.parent
VOCAB = 384
GREEDY_STEPS = 12
FP8_MAX = 448.0

# Every fixture: model geometry, storage format and the prompt. `covers` says why it exists.
FIXTURES = [
    dict(name="qwen3-tiny-chat", seed=101, hidden=128, inter=192, layers=2, heads=4, kv_heads=2,
         head_dim=64, tied=True, prompt_len=24, chat=True,
         covers=["bf16", "tied embeddings", "GQA 2", "head_dim 64 != hidden/heads (32)",
                 "complete HF directory with tokenizer and eos ids"]),
    dict(name="qwen3-untied-sharded", seed=202, hidden=128, inter=128, layers=3, heads=2, kv_heads=2,
         head_dim=64, tied=False, prompt_len=20, shards=3, rope_theta=10000.0, eps=1e-5,
         covers=["bf16", "untied lm_head", "GQA 1 (MHA)", "head_dim 64 == hidden/heads",
                 "sharded checkpoint (3 files + index)", "3 layers", "rope_theta 1e4, eps 1e-5"]),
    dict(name="qwen3-gqa4-hd128", seed=303, hidden=128, inter=192, layers=2, heads=4, kv_heads=1,
         head_dim=128, tied=False, prompt_len=32,
         covers=["bf16", "untied", "GQA 4", "head_dim 128 != hidden/heads (32)"]),
    dict(name="qwen3-fp8-block-bf16scale", seed=404, hidden=192, inter=320, layers=2, heads=3, kv_heads=1,
         head_dim=64, tied=True, prompt_len=20, quant="fp8_block", scale_dtype=torch.bfloat16,
         covers=["Qwen block FP8 [128,128]", "weight_scale_inv BF16", "GQA 3",
                 "partial edge blocks (hidden 192, intermediate 320, q rows 192, kv rows 64)", "tied"]),
    dict(name="qwen3-fp8-block-f32scale", seed=505, hidden=192, inter=320, layers=2, heads=4, kv_heads=2,
         head_dim=64, tied=True, prompt_len=20, quant="fp8_block", scale_dtype=torch.float32,
         unquantized=["model.layers.1.mlp.down_proj"],
         covers=["Qwen block FP8 [128,128]", "weight_scale_inv F32", "GQA 2", "partial edge blocks",
                 "one linear left BF16 (modules_to_not_convert)", "tied"]),
    dict(name="qwen3-fp8-block-k512", seed=909, hidden=512, inter=512, layers=1, heads=8, kv_heads=2,
         head_dim=64, tied=False, prompt_len=40, quant="fp8_block", scale_dtype=torch.float32,
         covers=["Qwen block FP8 [128,128] with every K = 512 and every N a multiple of 128: on CUDA the "
                 "prefill linears take the cuBLASLt block-scaled W8A8 GEMM (the smaller FP8 fixtures take "
                 "the dequantized BF16 route)", "fused q|k|v of whole 128-row scale blocks (512 + 128 + 128)",
                 "GQA 4", "1 layer", "untied"]),
    dict(name="qwen3-fp8-channel", seed=606, hidden=128, inter=192, layers=2, heads=4, kv_heads=4,
         head_dim=64, tied=False, prompt_len=20, quant="fp8_channel", scale_dtype=torch.bfloat16,
         covers=["compressed-tensors FP8 per-channel (weight_scale BF16 [N,1])", "GQA 1", "untied"]),
    dict(name="qwen3-yarn", seed=707, hidden=64, inter=128, layers=2, heads=4, kv_heads=2,
         head_dim=64, tied=True, prompt_len=44, max_pos=128,
         rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32},
         covers=["yarn rope_scaling factor 4, original_max_position_embeddings 32",
                 "prompt positions 0..43 and greedy positions up to 55 exceed 32",
                 "head_dim 64 != hidden/heads (16)"]),
    dict(name="qwen3-attn-bias", seed=808, hidden=64, inter=128, layers=2, heads=4, kv_heads=2,
         head_dim=64, tied=False, prompt_len=20, attention_bias=True,
         covers=["attention_bias=true (q/k/v/o biases)", "GQA 2", "untied"]),
]


def bf16_round(t):
    return t.to(torch.bfloat16).to(torch.float32)


def write_config(out, spec, eos_ids):
    """config.json in the form released Qwen3 checkpoints use (rope_theta at top level)."""
    cfg = {
        "architectures": ["Qwen3ForCausalLM"],
        "model_type": "qwen3",
        "attention_bias": spec.get("attention_bias", False),
        "attention_dropout": 0.0,
        "bos_token_id": None,
        "eos_token_id": eos_ids[0] if eos_ids else None,
        "head_dim": spec["head_dim"],
        "hidden_act": "silu",
        "hidden_size": spec["hidden"],
        "initializer_range": 0.02,
        "intermediate_size": spec["inter"],
        "max_position_embeddings": spec.get("max_pos", 256),
        "max_window_layers": spec["layers"],
        "num_attention_heads": spec["heads"],
        "num_hidden_layers": spec["layers"],
        "num_key_value_heads": spec["kv_heads"],
        "rms_norm_eps": spec.get("eps", 1e-6),
        "rope_scaling": spec.get("rope_scaling"),
        "rope_theta": spec.get("rope_theta", 1000000.0),
        "sliding_window": None,
        "tie_word_embeddings": spec["tied"],
        "torch_dtype": "bfloat16",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": VOCAB,
    }
    quant = spec.get("quant")
    if quant == "fp8_block":
        cfg["quantization_config"] = {
            "activation_scheme": "dynamic",
            "fmt": "e4m3",
            "quant_method": "fp8",
            "weight_block_size": [128, 128],
            "modules_to_not_convert": ["lm_head"] + spec.get("unquantized", []),
        }
    elif quant == "fp8_channel":
        cfg["quantization_config"] = {
            "quant_method": "compressed-tensors",
            "format": "float-quantized",
            "quantization_status": "compressed",
            "config_groups": {
                "group_0": {
                    "targets": ["Linear"],
                    "weights": {"num_bits": 8, "type": "float", "symmetric": True, "strategy": "channel",
                                "dynamic": False, "group_size": None, "block_structure": None},
                    "input_activations": {"num_bits": 8, "type": "float", "symmetric": True,
                                          "strategy": "token", "dynamic": True},
                    "output_activations": None,
                }
            },
            "ignore": ["lm_head"],
        }
    (out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    gen = {"do_sample": False, "transformers_version": transformers.__version__}
    if eos_ids:
        gen["eos_token_id"] = eos_ids if len(eos_ids) > 1 else eos_ids[0]
    (out / "generation_config.json").write_text(json.dumps(gen, indent=2) + "\n")


def random_weights(model, spec, gen):
    """Random weights large enough that greedy margins are rarely near-ties; rounded to bf16."""
    state = {}
    hidden = spec["hidden"]
    for name, param in model.state_dict().items():
        shape = param.shape
        if name.endswith("norm.weight"):
            value = 1.0 + 0.15 * torch.randn(shape, generator=gen)
        elif name.endswith(".bias"):
            value = 0.1 * torch.randn(shape, generator=gen)
        elif name == "model.embed_tokens.weight":
            # Tied: this table is also the lm_head, so give it the lm_head's scale.
            std = 1.8 / math.sqrt(hidden) if spec["tied"] else 0.5
            value = std * torch.randn(shape, generator=gen)
        elif name == "lm_head.weight":
            value = (1.8 / math.sqrt(hidden)) * torch.randn(shape, generator=gen)
        else:  # linear [out, in]
            value = torch.randn(shape, generator=gen) / math.sqrt(shape[1])
        state[name] = bf16_round(value)
    return state


def quantize_fp8(weight, kind, scale_dtype):
    """Returns (fp8 weight, stored scale, dequantized f32 weight). Scales multiply."""
    n, k = weight.shape
    if kind == "fp8_block":
        nb, kb = (n + 127) // 128, (k + 127) // 128
        amax = torch.zeros(nb, kb)
        for i in range(nb):
            for j in range(kb):
                amax[i, j] = weight[i * 128:(i + 1) * 128, j * 128:(j + 1) * 128].abs().max()
        scale = (amax / FP8_MAX).clamp(min=1e-8).to(scale_dtype)
        full = scale.float().repeat_interleave(128, 0)[:n].repeat_interleave(128, 1)[:, :k]
    else:  # per output channel, stored [N, 1]
        amax = weight.abs().amax(dim=1, keepdim=True)
        scale = (amax / FP8_MAX).clamp(min=1e-8).to(scale_dtype)
        full = scale.float().expand(n, k)
    q = (weight / full).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    return q, scale, q.float() * full


def storage_tensors(state, spec):
    """What the checkpoint stores, and the f32 weights the reference model runs."""
    stored, reference = {}, {}
    quant = spec.get("quant")
    skip = set(spec.get("unquantized", []))
    for name, value in state.items():
        if spec["tied"] and name == "lm_head.weight":
            continue  # tied: the embedding IS the lm_head (loading both would overwrite it)
        prefix = name[:-len(".weight")] if name.endswith(".weight") else None
        is_linear = prefix is not None and value.dim() == 2 and ".layers." in name
        if quant and is_linear and prefix not in skip:
            q, scale, deq = quantize_fp8(value, quant, spec["scale_dtype"])
            stored[name] = q.contiguous()
            suffix = "weight_scale_inv" if quant == "fp8_block" else "weight_scale"
            stored[f"{prefix}.{suffix}"] = scale.contiguous()
            reference[name] = deq
        else:
            stored[name] = value.to(torch.bfloat16).contiguous()
            reference[name] = value
    return stored, reference


def save_weights(out, stored, shards):
    names = sorted(stored)
    if shards <= 1:
        save_file({n: stored[n] for n in names}, str(out / "model.safetensors"), metadata={"format": "pt"})
        return
    per = (len(names) + shards - 1) // shards
    weight_map, total = {}, 0
    for s in range(shards):
        part = names[s * per:(s + 1) * per]
        fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        save_file({n: stored[n] for n in part}, str(out / fname), metadata={"format": "pt"})
        for n in part:
            weight_map[n] = fname
            total += stored[n].numel() * stored[n].element_size()
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (out / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")


def tokenizer_info():
    """(dir, eos ids) of the tiny tokenizer fixture, or (None, []) while it does not exist."""
    tok_dir = REPO / "tests/fixtures/tiny_tokenizer"
    tok_json = tok_dir / "tokenizer.json"
    if not tok_json.exists():
        return None, []
    added = {t["content"]: t["id"] for t in json.loads(tok_json.read_text()).get("added_tokens", [])}
    eos = [added[t] for t in ("<|im_end|>", "<|endoftext|>") if t in added]
    return tok_dir, eos


def chat_prompt_ids(tok_dir, length, gen):
    """A chat-rendered prompt tokenized with the tiny tokenizer, or random ids without one."""
    if tok_dir is not None:
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained(str(tok_dir))
        msgs = [{"role": "user", "content": "Hello tiny model, what is two plus two?"}]
        text = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        return tok(text, add_special_tokens=False)["input_ids"]
    return torch.randint(0, VOCAB, (length,), generator=gen).tolist()


@torch.no_grad()
def references(model, prompt):
    ids = torch.tensor([prompt])
    logits = model(ids).logits[0].float()
    seq, greedy, margins, rows = list(prompt), [], [], []
    for _ in range(GREEDY_STEPS):
        row = model(torch.tensor([seq])).logits[0, -1].float()
        top = torch.topk(row, 2)
        greedy.append(int(top.indices[0]))
        margins.append(float(top.values[0] - top.values[1]))
        rows.append(row)
        seq.append(greedy[-1])
    # The cached generate path must agree with the full recompute (a sanity check of HF itself).
    cached = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=GREEDY_STEPS,
                            do_sample=False, eos_token_id=None, pad_token_id=0)[0, len(prompt):].tolist()
    if cached != greedy and min(margins) > 1e-3:
        raise RuntimeError(f"HF generate {cached} != recompute {greedy}")
    return logits, greedy, torch.stack(rows), margins


def make_fixture(root, spec):
    out = root / spec["name"]
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    gen = torch.Generator().manual_seed(spec["seed"])
    tok_dir, eos = tokenizer_info() if spec.get("chat") else (None, [])
    if not spec.get("chat"):
        eos = [VOCAB - 1]  # present in config.json for the CLI's stop rule
    write_config(out, spec, eos)

    config = AutoConfig.from_pretrained(str(out))
    config._attn_implementation = "eager"
    model = Qwen3ForCausalLM(config).to(torch.float32).eval()
    model.config._attn_implementation = "eager"
    state = random_weights(model, spec, gen)
    stored, reference_state = storage_tensors(state, spec)
    missing, unexpected = model.load_state_dict(reference_state, strict=False)
    if unexpected or [m for m in missing if m != "lm_head.weight"]:
        raise RuntimeError(f"state dict mismatch: missing {missing} unexpected {unexpected}")
    if spec["tied"]:
        assert model.lm_head.weight.data_ptr() == model.model.embed_tokens.weight.data_ptr()
        assert torch.equal(model.lm_head.weight, reference_state["model.embed_tokens.weight"])
    save_weights(out, stored, spec.get("shards", 1))

    if spec.get("chat"):
        prompt = chat_prompt_ids(tok_dir, spec["prompt_len"], gen)
        if tok_dir is not None:
            for f in tok_dir.iterdir():
                if f.is_file():
                    shutil.copy(f, out / f.name)
    else:
        prompt = torch.randint(0, VOCAB, (spec["prompt_len"],), generator=gen).tolist()

    logits, greedy, greedy_logits, margins = references(model, prompt)
    save_file({
        "logits": logits.contiguous(),
        "prompt_ids": torch.tensor(prompt, dtype=torch.int32),
        "greedy_ids": torch.tensor(greedy, dtype=torch.int32),
        "greedy_logits": greedy_logits.contiguous(),
        "greedy_margins": torch.tensor(margins, dtype=torch.float32),
    }, str(out / "reference.safetensors"))

    quant = spec.get("quant")
    meta = {
        "name": spec["name"],
        "covers": spec["covers"],
        "seed": spec["seed"],
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "generator": "tools/make_fixtures.py",
        "reference": ("transformers Qwen3ForCausalLM, float32, attn_implementation=eager, weights "
                      "rounded to bf16 before the run; greedy by full recompute per step, no eos stop"),
        "weights": ("W8A16: reference uses the DEQUANTIZED weights w = float(fp8) * float(scale) in "
                    "float32, activations unquantized" if quant else "BF16"),
        "tokenizer": "tests/fixtures/tiny_tokenizer" if tok_dir is not None else None,
        "eos_token_ids": eos,
        "geometry": {k: spec.get(k) for k in ("hidden", "inter", "layers", "heads", "kv_heads", "head_dim")},
        "prompt_ids": prompt,
        "greedy_ids": greedy,
        "greedy_margins": [round(m, 6) for m in margins],
        "min_greedy_margin": round(min(margins), 6),
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    for f in out.iterdir():
        f.chmod(0o644)
    size = sum(f.stat().st_size for f in out.iterdir())
    print(f"{spec['name']}: {size / 1e6:.2f} MB, prompt {len(prompt)}, greedy {greedy}, "
          f"min margin {min(margins):.4f}")
    return size


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(REPO / "tests/fixtures/models"))
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)  # deterministic reductions
    root = Path(args.out)
    total = 0
    for spec in FIXTURES:
        if args.only and spec["name"] not in args.only:
            continue
        total += make_fixture(root, spec)
    print(f"total {total / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
