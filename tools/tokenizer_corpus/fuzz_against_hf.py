#!/usr/bin/env python3
"""Differential fuzz: `lathe tokenize` against HF tokenizers on random text.

Not a ctest (it needs HF `tokenizers` and takes a while); run it after changing src/tokenizer:

  python3 tools/tokenizer_corpus/fuzz_against_hf.py --lathe build/lathe --tokenizer DIR [--seed S] [--count N]

Two generators: "mixed" (printable ASCII, many scripts and planes, chat special tokens, near
misses, whitespace shapes, emoji sequences) and "marks" (combining marks, decomposable characters
and Hangul jamo, to stress NFC). Prints the number of mismatching strings (exit status 1 if any)
and the first few, with HF's normalised form.
"""
import argparse
import json
import random
import subprocess
import sys
import unicodedata

from tokenizers import Tokenizer

POOLS = [(0x20, 0x7E)] * 8 + [(0x9, 0xD), (0x80, 0x24F), (0x300, 0x36F), (0x370, 0x52F), (0x590, 0x6FF),
                              (0x900, 0xDFF), (0xE00, 0xEFF), (0x1100, 0x11FF), (0x1E00, 0x1FFF), (0x2000, 0x2BFF),
                              (0x3000, 0x30FF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0xF900, 0xFAFF), (0xFB00, 0xFFFD),
                              (0x10000, 0x1FFFF), (0x1F000, 0x1FAFF), (0x20000, 0x3FFFF), (0xE0000, 0xE01EF),
                              (0, 0x10FFFF)]
WORDS = ["the", "The", " the", "'s", "'S", "'re", "'ll", "LL", "don't", "123", "4567", " ", "  ", "   ", "\t", "\n",
         "\r\n", "\r", "\u00a0", "\u3000", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>",
         "<|endoftext|>", "<|im_sta", "|>", "<", "e\u0301", "\u1100\u1161", "\U0001F600", "\U0001F468\u200d\U0001F469",
         "\U0001F1FA\U0001F1F8"]


def valid(cp):
    return not 0xD800 <= cp <= 0xDFFF


def mixed(rng):
    parts = []
    for _ in range(rng.randint(1, 40)):
        if rng.random() < 0.35:
            parts.append(rng.choice(WORDS))
            continue
        cp = rng.randint(*rng.choice(POOLS))
        if valid(cp):
            parts.append(chr(cp))
    return "".join(parts)


def marks_generator():
    marks = [cp for cp in range(0x110000) if valid(cp) and unicodedata.category(chr(cp)).startswith("M")]
    decomposable = [cp for cp in range(0x110000) if valid(cp) and unicodedata.decomposition(chr(cp))[:1] not in ("", "<")]
    bases = (list(range(0x41, 0x5B)) + list(range(0x61, 0x7B)) + list(range(0x1100, 0x1176)) +
             list(range(0x11A7, 0x11C3)) + [0xAC00, 0xAC01, 0xB098, 0x3B1, 0x3B9, 0x3C5, 0x627, 0x648, 0x915, 0x928,
                                            0xE01, 0x5D0, 0x5E9, 0x1E00])
    other = [0x20, 0xA, 0x27, 0xF0000, 0x10FFFD]

    def make(rng):
        parts = []
        for _ in range(rng.randint(1, 25)):
            r = rng.random()
            pool = marks if r < 0.45 else decomposable if r < 0.65 else bases if r < 0.95 else other
            parts.append(chr(rng.choice(pool)))
        return "".join(parts)
    return make


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lathe", required=True)
    parser.add_argument("--tokenizer", required=True, help="directory holding tokenizer.json")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=20000)
    args = parser.parse_args()
    hf = Tokenizer.from_file(args.tokenizer + "/tokenizer.json")
    rng = random.Random(args.seed)
    marks = marks_generator()
    texts = [mixed(rng) if i % 2 == 0 else marks(rng) for i in range(args.count)]
    run = subprocess.run([args.lathe, "tokenize", args.tokenizer], capture_output=True,
                         input="".join(json.dumps(t) + "\n" for t in texts).encode())
    if run.returncode != 0:
        sys.exit(f"lathe tokenize failed: {run.stderr.decode()}")
    lines = run.stdout.decode().splitlines()
    assert len(lines) == len(texts)
    bad = 0
    for text, line in zip(texts, lines):
        want = hf.encode(text, add_special_tokens=False).ids
        if json.loads(line) != want:
            bad += 1
            if bad <= 5:
                normalized = hf.normalizer.normalize_str(text) if hf.normalizer else text
                print("MISMATCH", ascii(text)[:300], "HF normalised:", ascii(normalized)[:300])
    print(f"{len(texts)} strings, {bad} mismatches")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
