#!/usr/bin/env python3
"""Generates the Unicode property deltas that make PCRE2 match like HF tokenizers' Oniguruma.

HF tokenizers runs Split regexes with Oniguruma, whose Unicode tables are newer (16.0 in
tokenizers 0.23) than those of the PCRE2 lathe links (Debian 12: PCRE2 10.42, Unicode 14.0). A
letter added in Unicode 15 or 16 is \\p{L} for HF but not for PCRE2, which changes the split.
This script asks HF's own regex engine (a Split pre-tokenizer per property) which code points
each general-category property matches, compares with Python's unicodedata (Unicode 14.0, the
version of PCRE2 10.42; the C++ test checks PCRE2 against the fixture below), and writes:

  src/tokenizer/unicode_classes.cpp               per category: the ranges Oniguruma matches
                                                  beyond Unicode 14 (appended to \\p{X} by
                                                  translate_pattern), and the count it no
                                                  longer matches (not representable; reported)
  tests/fixtures/tokenizer/onig_classes.json      Oniguruma's complete sets for L, N, M and \\s,
                                                  as ranges, for the exhaustive C++ test

It also probes HF's NFC/NFD normalizer (whose Unicode tables are older than utf8proc's) for the
code points it knows anything about (a canonical decomposition, a non-zero combining class, a
part in a canonical composition) and writes:

  src/tokenizer/unicode_classes.cpp               hf_normalization_known(): those code points,
                                                  as ranges; lathe's Normalizer treats every
                                                  other code point as inert, as HF does;
                                                  hf_nfc_unsafe(): the code points that are not
                                                  an NFC boundary for HF (text without any is
                                                  its own NFC; NFC runs only around them)
  tests/fixtures/tokenizer/nfc_probes.jsonl       probe strings around every mark and every
                                                  composable character, with HF's NFC of each

Run from anywhere:  python3 tools/make_tokenizer_unicode_tables.py
"""
import json
import os
import unicodedata

import tokenizers
from tokenizers import Regex, normalizers, pre_tokenizers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CATEGORIES = ["L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N", "Nd", "Nl", "No",
              "P", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "S", "Sm", "Sc", "Sk", "So", "Z", "Zs", "Zl", "Zp"]
ALL = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]


def onig_set(pattern):
    """Code points HF's engine matches with `pattern` (a one-character class)."""
    split = pre_tokenizers.Split(Regex(pattern), behavior="isolated")
    members = set()
    sep = "\u0000"  # matched by none of the classes probed; a lone non-separator piece is a match
    for i in range(0, len(ALL), 20000):
        text = sep.join(map(chr, ALL[i:i + 20000]))
        for _, (a, b) in split.pre_tokenize_str(text):
            if b - a == 1 and text[a] != sep:
                members.add(ord(text[a]))
    return members


def ranges(code_points):
    out = []
    for cp in sorted(code_points):
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def composition_pairs():
    """(first, second) of every canonical composition Python's tables list, plus Hangul."""
    pairs = []
    for cp in ALL:
        d = unicodedata.decomposition(chr(cp))
        if d and not d.startswith("<"):
            parts = d.split()
            if len(parts) == 2:
                pairs.append((int(parts[0], 16), int(parts[1], 16)))
    pairs += [(lead, 0x1161) for lead in range(0x1100, 0x1113)]
    pairs += [(0x1100, vowel) for vowel in range(0x1161, 0x1176)]
    pairs += [(0xAC00, trail) for trail in range(0x11A8, 0x11C3)]
    pairs += [(syllable, 0x11A8) for syllable in range(0xAC00, 0xD7A4, 28)]
    return pairs


def changed_by(normalizer, probes):
    """Indices of `probes` that `normalizer` changes (probes joined by NUL, a starter)."""
    changed = set()
    for i in range(0, len(probes), 20000):
        block = probes[i:i + 20000]
        out = normalizer.normalize_str("\u0000".join(block)).split("\u0000")
        assert len(out) == len(block)
        changed.update(i + k for k, (a, b) in enumerate(zip(block, out)) if a != b)
    return changed


def hf_normalization_sets():
    """(known, nfc_unsafe): the code points HF's normalizer knows (decomposes, reorders or
    composes), and those that are not an NFC boundary for it (changed by NFC alone, non-zero
    combining class, or the second of a composition it performs)."""
    nfc, nfd = normalizers.NFC(), normalizers.NFD()
    cps = ALL[1:]  # NUL separates the probes
    alone = [chr(cp) for cp in cps]
    nfc_changed = {cps[i] for i in changed_by(nfc, alone)}
    # Non-zero combining class: reordered against U+0334 (ccc 1) after it, or U+0301 (ccc 230)
    # before it ('q' composes with neither).
    reordered = {cps[i] for i in changed_by(nfc, ["q" + chr(cp) + "\u0334" for cp in cps])}
    reordered |= {cps[i] for i in changed_by(nfc, ["q\u0301" + chr(cp) for cp in cps])}
    pairs = composition_pairs()
    composing = [pairs[i] for i in changed_by(nfc, [chr(a) + chr(b) for a, b in pairs])]
    seconds = {b for _, b in composing}
    known = {cps[i] for i in changed_by(nfd, alone)} | nfc_changed | reordered | seconds | {a for a, _ in composing}
    return known, nfc_changed | reordered | seconds


def nfc_probes():
    """Probe strings exercising every mark and every composition, with HF's NFC of each."""
    nfc = normalizers.NFC()
    marks = [cp for cp in ALL if unicodedata.category(chr(cp)).startswith("M") or unicodedata.combining(chr(cp))]
    decomposable = [cp for cp in ALL if unicodedata.decomposition(chr(cp))[:1] not in ("", "<")]
    probes = [chr(cp) for cp in decomposable]
    probes += ["q" + chr(cp) + "\u0334" for cp in marks] + ["q\u0301" + chr(cp) for cp in marks]
    probes += [chr(a) + chr(b) for a, b in composition_pairs() if not 0xAC00 <= a <= 0xD7A3]
    # Private-use planes 15-16 (lathe's placeholders) next to marks HF does and does not know.
    probes += ["\U000F0000\u0EBA\u0E38\U0010FFFD", "a\u0EBA\u0E38\U000F0001e\u0301\U000F0000",
               "\U000F0000\u0301", "e\U000F0000\u0301", "\u0E38\u0EBA" * 3 + "\U0010FFFD",
               "\uAC00\u11A7", "\u1100\u1161\u11A7", "\uAC00\u11A8\u11A7"]  # U+11A7: Hangul T base
    out = nfc.normalize_str("\u0000".join(probes)).split("\u0000")
    return list(zip(probes, out))


def main():
    rows = []
    for category in CATEGORIES:
        onig = onig_set(r"\p{%s}" % category)
        ucd14 = {cp for cp in ALL if unicodedata.category(chr(cp)).startswith(category)}
        rows.append((category, ranges(onig - ucd14), len(ucd14 - onig)))
        print(f"{category}: +{len(onig - ucd14)} code points in {len(rows[-1][1])} ranges, -{len(ucd14 - onig)}")

    lines = [
        "// GENERATED by tools/make_tokenizer_unicode_tables.py from HF tokenizers "
        f"{tokenizers.__version__} (Oniguruma) and",
        f"// Python unicodedata {unicodedata.unidata_version}. Do not edit; rerun the script.",
        "#include \"tokenizer/unicode_classes.h\"",
        "",
        "namespace lathe::tokenizer {",
        "namespace {",
        "",
    ]
    for category, extra, _ in rows:
        if not extra:
            continue
        lines.append(f"constexpr CodePointRange k{category}[] = {{")
        for lo, hi in extra:
            lines.append(f"    {{0x{lo:X}, 0x{hi:X}}},")
        lines.append("};")
    known, unsafe = (ranges(s) for s in hf_normalization_sets())
    print(f"HF normalizer knows {sum(b - a + 1 for a, b in known)} code points in {len(known)} ranges, "
          f"{sum(b - a + 1 for a, b in unsafe)} in {len(unsafe)} ranges are not NFC boundaries")
    for name, table in (("kNormalizationKnown", known), ("kNfcUnsafe", unsafe)):
        lines.append(f"constexpr CodePointRange {name}[] = {{")
        for lo, hi in table:
            lines.append(f"    {{0x{lo:X}, 0x{hi:X}}},")
        lines.append("};")
    lines += ["", "}  // namespace", "",
              "std::span<const CodePointRange> hf_normalization_known() { return kNormalizationKnown; }",
              "std::span<const CodePointRange> hf_nfc_unsafe() { return kNfcUnsafe; }", "",
              "std::optional<CategoryDelta> onig_category_delta(std::string_view category) {"]
    for category, extra, missing in rows:
        span = f"std::span<const CodePointRange>(k{category})" if extra else "std::span<const CodePointRange>()"
        lines.append(f"  if (category == \"{category}\") return CategoryDelta{{{span}, {missing}}};")
    lines += ["  return std::nullopt;", "}", "", "}  // namespace lathe::tokenizer", ""]
    with open(os.path.join(ROOT, "src", "tokenizer", "unicode_classes.cpp"), "w", encoding="ascii") as f:
        f.write("\n".join(lines))

    fixture = {"tokenizers_version": tokenizers.__version__,
               "generated_by": "tools/make_tokenizer_unicode_tables.py",
               "L": ranges(onig_set(r"\p{L}")), "N": ranges(onig_set(r"\p{N}")), "M": ranges(onig_set(r"\p{M}")),
               "s": ranges(onig_set(r"\s"))}
    with open(os.path.join(ROOT, "tests", "fixtures", "tokenizer", "onig_classes.json"), "w", encoding="ascii") as f:
        json.dump(fixture, f, separators=(",", ":"))
        f.write("\n")
    probes = nfc_probes()
    with open(os.path.join(ROOT, "tests", "fixtures", "tokenizer", "nfc_probes.jsonl"), "w", encoding="utf-8") as f:
        f.write(json.dumps({"tokenizers_version": tokenizers.__version__, "probes": len(probes),
                            "generated_by": "tools/make_tokenizer_unicode_tables.py"}) + "\n")
        for probe, normalized in probes:
            f.write(json.dumps([probe, normalized], ensure_ascii=False) + "\n")
    print(f"wrote src/tokenizer/unicode_classes.cpp, tests/fixtures/tokenizer/onig_classes.json and "
          f"nfc_probes.jsonl ({len(probes)} probes)")


if __name__ == "__main__":
    main()
