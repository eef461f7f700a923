#!/usr/bin/env python3
"""Smoke test of tools/peers/hf_generate.py on the CPU with a tiny fixture config: it parses its
flags, builds the random-weight model from config.json alone (as many parameters as the fixture
checkpoint holds), runs both modes and writes its JSON report. Exit 77 (ctest: skipped) when torch
or transformers is not installed."""

import json
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "models" / "qwen3-tiny-chat"

try:
    import torch  # noqa: F401
    import transformers  # noqa: F401
    from safetensors import safe_open
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

sys.path.insert(0, str(ROOT / "tools" / "peers"))
import hf_generate  # noqa: E402


def checkpoint_params(directory: Path) -> int:
    config = json.loads((directory / "config.json").read_text())
    total = 0
    with safe_open(str(directory / "model.safetensors"), "pt") as f:
        for name in f.keys():
            if config.get("tie_word_embeddings") and name == "lm_head.weight":
                continue
            total += math.prod(f.get_slice(name).get_shape())
    return total


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "hf.json"
        rc = hf_generate.main([str(FIXTURE), "--device", "cpu", "--dtype", "float32", "--batch-sizes", "1,2",
                               "--prompt-len", "8", "--new-tokens", "3", "--repeats", "1", "--warmup", "1",
                               "--out", str(out)])
        assert rc == 0, rc
        report = json.loads(out.read_text())
    assert report["params"] == checkpoint_params(FIXTURE), (report["params"], checkpoint_params(FIXTURE))
    rows = report["rows"]
    assert [(r["mode"], r["batch"]) for r in rows] == [("eager", 1), ("eager", 2), ("static-compiled", 1),
                                                       ("static-compiled", 2)], rows
    for r in rows:
        assert r["new_tokens"] == 3 and r["prompt_len"] == 8, r
        assert math.isfinite(r["tpot_ms"]) and r["prefill_plus_1_ms"] > 0, r
    # Bad flags are argparse errors (exit status 2).
    for bad in (["--batch-sizes", "0"], ["--modes", "nope"], ["--new-tokens", "0"]):
        try:
            hf_generate.parse_args([str(FIXTURE)] + bad)
        except SystemExit as e:
            assert e.code == 2, (bad, e.code)
        else:
            raise AssertionError(f"{bad} was accepted")
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
