#!/usr/bin/env python3
"""Writes tests/fixtures/rope/qwen3_rope.json: RoPE inv_freq and attention_scaling exactly as
transformers' Qwen3RotaryEmbedding computes them (float32, CPU), for config.json variants that
tests/unit/model_config parses with lathe's own parser and compares against.

Usage: python3 tools/gen_rope_fixture.py [OUT.json]   (needs torch + transformers)
"""
import copy
import json
import math
import os
import sys

import torch
import transformers
from transformers import Qwen3Config
from transformers.models.qwen3.modeling_qwen3 import Qwen3RotaryEmbedding

BASE = {
    "model_type": "qwen3",
    "architectures": ["Qwen3ForCausalLM"],
    "vocab_size": 256,
    "hidden_size": 4096,
    "intermediate_size": 12288,
    "num_hidden_layers": 2,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "max_position_embeddings": 40960,
    "rope_theta": 1000000.0,
}


def case(name, **overrides):
    config = dict(BASE)
    config.update(overrides)
    return name, config


def degenerate_yarn_positions():
    """An original_max_position_embeddings where yarn's truncated range collapses (low == high
    == dim-1 for dim 8, theta 10), which exercises HF's `high += 0.001`."""
    dim, base = 8, 10.0
    for positions in range(1000, 10**6, 97):
        low = math.floor(dim * math.log(positions / (32 * 2 * math.pi)) / (2 * math.log(base)))
        high = math.ceil(dim * math.log(positions / (1 * 2 * math.pi)) / (2 * math.log(base)))
        if max(low, 0) == min(high, dim - 1):
            return positions
    raise RuntimeError("no degenerate case found")


CASES = [
    case("default_qwen3_8b"),
    case("default_theta_1e4_hd64", rope_theta=10000.0, head_dim=64),
    case("default_theta_absent", rope_theta=None),
    case("linear_factor_2", rope_scaling={"rope_type": "linear", "factor": 2.0}),
    case("dynamic_factor_2", rope_scaling={"type": "dynamic", "factor": 2.0}),
    case("yarn_qwen_4x", rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}),
    case("yarn_no_truncate",
         rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768,
                       "truncate": False}),
    case("yarn_mscale_beta",
         rope_scaling={"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
                       "mscale": 1.0, "mscale_all_dim": 0.707, "beta_fast": 16, "beta_slow": 2}),
    case("yarn_attention_factor",
         rope_scaling={"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 8192,
                       "attention_factor": 1.5}),
    case("yarn_rope_parameters_type_alias", rope_theta=None, head_dim=64,
         rope_parameters={"type": "yarn", "rope_theta": 500000.0, "factor": 2.0,
                          "original_max_position_embeddings": 20480}),
    case("yarn_factor_from_lengths", max_position_embeddings=65536,
         rope_scaling={"rope_type": "yarn", "factor": None, "original_max_position_embeddings": 16384}),
    case("yarn_partial_rotary", partial_rotary_factor=0.5,
         rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}),
    case("yarn_degenerate_range", head_dim=8, num_attention_heads=4, num_key_value_heads=4, hidden_size=32,
         rope_theta=10.0,
         rope_scaling={"rope_type": "yarn", "factor": 4.0,
                       "original_max_position_embeddings": degenerate_yarn_positions()}),
]


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "tests", "fixtures", "rope", "qwen3_rope.json")
    cases = []
    for name, config_json in CASES:
        kwargs = {k: v for k, v in config_json.items() if v is not None}
        config = Qwen3Config(**copy.deepcopy(kwargs))  # HF edits nested dicts in place
        rotary = Qwen3RotaryEmbedding(config)
        inv_freq = rotary.inv_freq.to(torch.float32).tolist()  # float32 values, exact in double
        cases.append({
            "name": name,
            "config": kwargs,  # a top-level None in CASES means "key absent"
            "rope_type": rotary.rope_type,
            "inv_freq": inv_freq,
            "attention_scaling": float(rotary.attention_scaling),
        })
    fixture = {
        "generator": "tools/gen_rope_fixture.py",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "cases": cases,
    }
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w") as f:
        json.dump(fixture, f, indent=1)
        f.write("\n")
    print(f"wrote {len(cases)} cases to {out_path}")


if __name__ == "__main__":
    main()
