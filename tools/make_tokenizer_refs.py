#!/usr/bin/env python3
"""Writes the tokenizer reference fixtures from HF `tokenizers` (the reference implementation).

For each tokenizer below and each corpus string it records the ids of
`encode(text, add_special_tokens=False)` and `decode(ids, skip_special_tokens=False/True)`:

  tests/fixtures/tokenizer/qwen3_refs.jsonl       Qwen3 (/work/shared/tokenizers/qwen3) on
                                                  tools/tokenizer_corpus/corpus.jsonl
  tests/fixtures/tokenizer/tiny_refs.jsonl        tests/fixtures/tiny_tokenizer on the same corpus
  tests/fixtures/tokenizer/tiny_flags/tokenizer.json + tiny_flags_refs.jsonl
                                                  the tiny tokenizer plus added tokens that use
                                                  lstrip / rstrip / single_word / normalized, on
                                                  FLAGS_CORPUS below

  tests/fixtures/tokenizer/{qwen3,tiny}_decode_refs.jsonl
                                                  decode() of id sequences that are not whole
                                                  encodings: slices of the corpus encodings (cut
                                                  inside multi-byte characters, so U+FFFD
                                                  replacement is exercised) and random ids over
                                                  the whole id range, including added tokens
                                                  and ids the tokenizer does not know

  tests/fixtures/tokenizer/utf8_lossy_refs.jsonl  byte strings (hex) and Python's
                                                  bytes.decode("utf-8", "replace"), the same
                                                  maximal-subpart U+FFFD policy as HF's decode

Line 1 of each refs file is a header object (tokenizers version, source file and its sha256);
every further line is {"text", "ids", "decode", "decode_skip_special"} ("text" is absent in the
decode refs).

Run from anywhere:  python3 tools/make_tokenizer_refs.py [--qwen3-dir DIR]
"""
import argparse
import hashlib
import json
import os
import random

import tokenizers
from tokenizers import AddedToken, Tokenizer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fixtures", "tokenizer")

FLAGS_TOKENS = [
    AddedToken("[SW]", normalized=False, single_word=True),
    AddedToken("[L]", normalized=False, lstrip=True),
    AddedToken("[R]", normalized=False, rstrip=True),
    AddedToken("[LR]", normalized=False, lstrip=True, rstrip=True, special=True),
    AddedToken("\u00e9t\u00e9", normalized=True),  # NFC content; matched after normalisation
    AddedToken("[N]", normalized=True),
    AddedToken("[N]x", normalized=False),         # longer raw token sharing a prefix
    AddedToken("\u0120sym", normalized=False),    # decodes through the byte-level map: " sym"
    AddedToken("a b\u00e9", normalized=False),    # holds non-symbols: decodes as its own text
]

FLAGS_CORPUS = [
    "a[SW]b", "a [SW] b", "_[SW]", "\u00e9[SW]", "1[SW]", "-[SW]-", "[SW]", " [SW]", "[SW] ", "\u00a0[SW]\u3000",
    "x[SW]y [SW] z[SW] [SW]w", "x  \n [L]y", "[L]", "  [L]", "x  [L][L]", "x[R] \t\n y", "[R]", "[R]  [L]",
    "[R]\u3000z", "[R]\u180ez", "[R]\u0085z", "a  [LR]  b", "[LR][LR]", " [LR] ", "\u00e9t\u00e9", "e\u0301te\u0301",
    "l'\u00e9t\u00e9 dernier", "[N]", "[N]x", "[N]y", "[N][N]x", "\u0120sym", "x\u0120symy", "a b\u00e9", "a b\u00e9<|im_end|>",
    "<|im_start|>[L] [R] [SW]<|im_end|>", "plain text with nothing special", "[[SW]] ([L]) {[R]}",
]


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_refs(tok, source, corpus, out_path):
    with open(out_path, "w", encoding="utf-8", newline="\n") as f:
        header = {"tokenizers_version": tokenizers.__version__, "tokenizer": os.path.relpath(source, ROOT),
                  "tokenizer_sha256": sha256(source), "strings": len(corpus),
                  "generated_by": "tools/make_tokenizer_refs.py"}
        f.write(json.dumps(header, ensure_ascii=True) + "\n")
        for text in corpus:
            ids = tok.encode(text, add_special_tokens=False).ids
            record = {"text": text, "ids": ids, "decode": tok.decode(ids, skip_special_tokens=False),
                      "decode_skip_special": tok.decode(ids, skip_special_tokens=True)}
            f.write(json.dumps(record, ensure_ascii=True) + "\n")
    print(f"wrote {out_path}: {len(corpus)} strings (tokenizers {tokenizers.__version__})")


def write_decode_refs(tok, source, corpus, out_path, seed):
    rng = random.Random(seed)
    size = tok.get_vocab_size(with_added_tokens=True)
    sequences = []
    for text in corpus:
        ids = tok.encode(text, add_special_tokens=False).ids
        if len(ids) < 2 or text.isascii():
            continue
        # Slices of at most 48 ids keep the fixture small.
        i = rng.randrange(0, len(ids))
        j = rng.randrange(i + 1, min(len(ids), i + 48) + 1)
        sequences += [ids[1:49], ids[max(0, len(ids) // 2 - 48):len(ids) // 2], ids[i:j]]
    for _ in range(100):
        seq = [rng.randrange(0, size) for _ in range(64)]
        seq[rng.randrange(64)] = rng.randrange(size - 30, size)  # likely an added token
        seq[rng.randrange(64)] = rng.choice([size, size + 7, 2**31 - 1])  # unknown ids are skipped
        sequences.append(seq)
    with open(out_path, "w", encoding="utf-8", newline="\n") as f:
        header = {"tokenizers_version": tokenizers.__version__, "tokenizer": os.path.relpath(source, ROOT),
                  "tokenizer_sha256": sha256(source), "sequences": len(sequences),
                  "generated_by": "tools/make_tokenizer_refs.py"}
        f.write(json.dumps(header, ensure_ascii=True) + "\n")
        for ids in sequences:
            record = {"ids": ids, "decode": tok.decode(ids, skip_special_tokens=False),
                      "decode_skip_special": tok.decode(ids, skip_special_tokens=True)}
            f.write(json.dumps(record, ensure_ascii=True) + "\n")
    print(f"wrote {out_path}: {len(sequences)} id sequences")


def write_utf8_refs(out_path, seed):
    rng = random.Random(seed)
    # Bytes that matter to UTF-8 decoding: ASCII, continuation bytes, every lead-byte class
    # (C0/C1 and F5..FF never valid; E0, ED, F0, F4 with narrowed second bytes).
    alphabet = [0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED,
                0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
    cases = [bytes([b]) for b in alphabet]
    for _ in range(400):
        cases.append(bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 10))))
    with open(out_path, "w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps({"reference": "python bytes.decode('utf-8', 'replace')", "cases": len(cases)}) + "\n")
        for b in cases:
            f.write(json.dumps({"hex": b.hex(), "text": b.decode("utf-8", "replace")}, ensure_ascii=True) + "\n")
    print(f"wrote {out_path}: {len(cases)} byte strings")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--qwen3-dir", default=os.path.join(ROOT, "..", "shared", "tokenizers", "qwen3"))
    parser.add_argument("--corpus", default=os.path.join(ROOT, "tools", "tokenizer_corpus", "corpus.jsonl"))
    args = parser.parse_args()
    with open(args.corpus, encoding="ascii") as f:
        corpus = [json.loads(line) for line in f if line.strip()]
    os.makedirs(OUT, exist_ok=True)

    qwen3 = os.path.normpath(os.path.join(args.qwen3_dir, "tokenizer.json"))
    write_refs(Tokenizer.from_file(qwen3), qwen3, corpus, os.path.join(OUT, "qwen3_refs.jsonl"))
    write_decode_refs(Tokenizer.from_file(qwen3), qwen3, corpus, os.path.join(OUT, "qwen3_decode_refs.jsonl"), 1)

    tiny = os.path.join(ROOT, "tests", "fixtures", "tiny_tokenizer", "tokenizer.json")
    write_refs(Tokenizer.from_file(tiny), tiny, corpus, os.path.join(OUT, "tiny_refs.jsonl"))
    write_decode_refs(Tokenizer.from_file(tiny), tiny, corpus, os.path.join(OUT, "tiny_decode_refs.jsonl"), 2)

    write_utf8_refs(os.path.join(OUT, "utf8_lossy_refs.jsonl"), 3)

    flags_dir = os.path.join(OUT, "tiny_flags")
    os.makedirs(flags_dir, exist_ok=True)
    flags = Tokenizer.from_file(tiny)
    flags.add_tokens(FLAGS_TOKENS)
    flags_path = os.path.join(flags_dir, "tokenizer.json")
    flags.save(flags_path, pretty=True)
    write_refs(Tokenizer.from_file(flags_path), flags_path, FLAGS_CORPUS, os.path.join(OUT, "tiny_flags_refs.jsonl"))


if __name__ == "__main__":
    main()
