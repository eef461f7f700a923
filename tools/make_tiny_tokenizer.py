#!/usr/bin/env python3
"""Trains the tiny byte-level BPE tokenizer used by lathe's tiny test checkpoints.

Output: tests/fixtures/tiny_tokenizer/{tokenizer.json, tokenizer_config.json}.

The tokenizer has the same pipeline as Qwen3 (NFC normaliser, the Split pre-tokenizer whose regex
is read from the Qwen3 tokenizer.json, ByteLevel without prefix space, ByteLevel decoder, no
byte fallback, no unk) and a vocabulary of EXACTLY 384 entries:
  ids 0..255     the 256 byte-level symbols (GPT-2 byte-to-unicode alphabet)
  ids 256..376   121 merges learned from tools/tokenizer_corpus/tiny_train.txt
  ids 377..383   the added tokens Qwen3's chat template needs, in this order:
                 <|endoftext|> <|im_start|> <|im_end|> (special, like Qwen3) and
                 <think> </think> <tool_call> </tool_call> (not special, like Qwen3).
tokenizer_config.json carries Qwen3's chat_template verbatim, eos_token <|im_end|>,
pad_token <|endoftext|>, no BOS.

Deterministic: the same inputs give byte-identical files (checked by running it twice).
Run from anywhere:  python3 tools/make_tiny_tokenizer.py [--qwen3-dir DIR] [--out DIR]
"""
import argparse
import json
import os
import sys

import tokenizers
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB_SIZE = 384
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
NON_SPECIAL = ["<think>", "</think>", "<tool_call>", "</tool_call>"]


def qwen3_split_regex(qwen3_tokenizer_json):
    with open(qwen3_tokenizer_json, encoding="utf-8") as f:
        spec = json.load(f)
    for pre in spec["pre_tokenizer"]["pretokenizers"]:
        if pre["type"] == "Split":
            return pre["pattern"]["Regex"]
    sys.exit(f"{qwen3_tokenizer_json}: no Split pre-tokenizer found")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qwen3-dir", default=os.path.join(ROOT, "..", "shared", "tokenizers", "qwen3"))
    parser.add_argument("--train-text", default=os.path.join(ROOT, "tools", "tokenizer_corpus", "tiny_train.txt"))
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "tiny_tokenizer"))
    args = parser.parse_args()

    regex = qwen3_split_regex(os.path.join(args.qwen3_dir, "tokenizer.json"))
    with open(os.path.join(args.qwen3_dir, "tokenizer_config.json"), encoding="utf-8") as f:
        qwen3_config = json.load(f)
    with open(args.train_text, encoding="utf-8") as f:
        text = f.read()

    tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    regular = VOCAB_SIZE - len(SPECIAL) - len(NON_SPECIAL)
    trainer = trainers.BpeTrainer(vocab_size=regular, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    # One training "sentence" per paragraph keeps the result independent of the line layout.
    tok.train_from_iterator([p for p in text.split("\n\n") if p.strip()], trainer=trainer)
    if tok.get_vocab_size() != regular:
        sys.exit(f"training gave {tok.get_vocab_size()} regular tokens, wanted {regular}: lengthen {args.train_text}")
    tok.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in SPECIAL])
    tok.add_tokens([AddedToken(t, normalized=False, special=False) for t in NON_SPECIAL])
    if tok.get_vocab_size(with_added_tokens=True) != VOCAB_SIZE:
        sys.exit(f"vocab size {tok.get_vocab_size(with_added_tokens=True)} != {VOCAB_SIZE}")
    for i, t in enumerate(SPECIAL + NON_SPECIAL):
        assert tok.token_to_id(t) == regular + i, (t, tok.token_to_id(t))

    os.makedirs(args.out, exist_ok=True)
    tok.save(os.path.join(args.out, "tokenizer.json"), pretty=True)

    added_decoder = {}
    for t in SPECIAL + NON_SPECIAL:
        added_decoder[str(tok.token_to_id(t))] = {
            "content": t, "lstrip": False, "normalized": False, "rstrip": False,
            "single_word": False, "special": t in SPECIAL}
    config = {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": added_decoder,
        "bos_token": None,
        "chat_template": qwen3_config["chat_template"],
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 4096,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": qwen3_config.get("tokenizer_class", "Qwen2Tokenizer"),
        "unk_token": None,
        "generated_by": f"tools/make_tiny_tokenizer.py with tokenizers {tokenizers.__version__}",
    }
    with open(os.path.join(args.out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {args.out}: vocab {VOCAB_SIZE} ({regular} regular + {len(SPECIAL) + len(NON_SPECIAL)} added)")


if __name__ == "__main__":
    main()
