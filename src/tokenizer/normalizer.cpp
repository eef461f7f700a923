#include "tokenizer/normalizer.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "tokenizer/unicode_classes.h"
#include "tokenizer/utf8.h"

namespace lathe::tokenizer {
namespace {

constexpr char32_t kPlaceholderBase = 0xF0000;
constexpr size_t kPlaceholderCount = 0x10FFFE - 0xF0000;
// U+11A7 is the base of the Hangul trailing consonants, not one of them; utf8proc 2.8 composes
// "LV syllable + U+11A7" into the LV syllable, dropping the U+11A7. Masking it keeps it.
constexpr char32_t kHangulTBase = 0x11A7;

// Code point at `pos` of valid UTF-8 and its length.
char32_t decode_at(std::string_view text, size_t pos, size_t& length) {
  const auto* data = reinterpret_cast<const unsigned char*>(text.data());
  unsigned char lead = data[pos];
  if (lead < 0x80) {
    length = 1;
    return lead;
  }
  length = lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  if (pos + length > text.size()) {
    length = 1;
    return 0xFFFD;
  }
  char32_t cp = lead & (lead < 0xE0 ? 0x1Fu : lead < 0xF0 ? 0x0Fu : 0x07u);
  for (size_t k = 1; k < length; ++k) cp = (cp << 6) | (data[pos + k] & 0x3Fu);
  return cp;
}

bool is_ascii(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

int options_for(NormalForm form) {
  int options = UTF8PROC_STABLE;
  switch (form) {
    case NormalForm::kNfc: return options | UTF8PROC_COMPOSE;
    case NormalForm::kNfd: return options | UTF8PROC_DECOMPOSE;
    case NormalForm::kNfkc: return options | UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
    case NormalForm::kNfkd: return options | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
  }
  return options;
}


// Code points lathe hides from utf8proc so that it normalises with HF's (older) tables: those
// utf8proc knows something about (non-zero combining class, canonical decomposition, part in a
// composition) that HF's normalizer does not, plus the private-use planes 15-16, which hold the
// placeholders. Sorted, disjoint; built once.
const std::vector<CodePointRange>& masked_code_points() {
  static const std::vector<CodePointRange> masked = [] {
    std::span<const CodePointRange> known = hf_normalization_known();
    auto is_known = [&](char32_t cp) {
      auto it = std::upper_bound(known.begin(), known.end(), cp,
                                 [](char32_t value, const CodePointRange& range) { return value < range.lo; });
      return it != known.begin() && cp <= std::prev(it)->hi;
    };
    std::vector<CodePointRange> ranges;
    for (char32_t cp = 0; cp < kPlaceholderBase; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      const utf8proc_property_t* property = utf8proc_get_property(static_cast<utf8proc_int32_t>(cp));
      bool active = property->combining_class != 0 || property->comb_index != UINT16_MAX ||
                    (property->decomp_seqindex != UINT16_MAX && property->decomp_type == 0) ||
                    cp == kHangulTBase;
      if (!active || is_known(cp)) continue;
      if (!ranges.empty() && ranges.back().hi + 1 == cp) {
        ranges.back().hi = cp;
      } else {
        ranges.push_back({cp, cp});
      }
    }
    ranges.push_back({kPlaceholderBase, 0x10FFFF});
    return ranges;
  }();
  return masked;
}

bool is_masked(char32_t cp) {
  const std::vector<CodePointRange>& ranges = masked_code_points();
  auto it = std::upper_bound(ranges.begin(), ranges.end(), cp,
                             [](char32_t value, const CodePointRange& range) { return value < range.lo; });
  return it != ranges.begin() && cp <= std::prev(it)->hi;
}

bool holds_masked(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t length = 0;
    char32_t cp = decode_at(text, pos, length);
    if (cp >= 0x80 && is_masked(cp)) return true;
    pos += length;
  }
  return false;
}

// utf8proc_map_custom callback: masked code points become placeholders U+F0000 + k (private
// use: combining class 0, no decomposition, no composition, which is exactly how HF treats a code
// point it does not know), remembering the original of each.
struct Placeholders {
  std::vector<char32_t> originals;
  bool overflow = false;
};

utf8proc_int32_t to_placeholder(utf8proc_int32_t cp, void* data) {
  auto* placeholders = static_cast<Placeholders*>(data);
  if (!is_masked(static_cast<char32_t>(cp))) return cp;
  if (placeholders->originals.size() >= kPlaceholderCount) {
    placeholders->overflow = true;
    return cp;
  }
  placeholders->originals.push_back(static_cast<char32_t>(cp));
  return static_cast<utf8proc_int32_t>(kPlaceholderBase + placeholders->originals.size() - 1);
}

std::string run_utf8proc(std::string_view text, int options, Placeholders* placeholders) {
  utf8proc_uint8_t* mapped = nullptr;
  // An explicit length (no UTF8PROC_NULLTERM) keeps embedded NUL characters.
  utf8proc_ssize_t length =
      utf8proc_map_custom(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                          static_cast<utf8proc_ssize_t>(text.size()), &mapped, static_cast<utf8proc_option_t>(options),
                          placeholders != nullptr ? &to_placeholder : nullptr, placeholders);
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(mapped, &std::free);
  if (length < 0) fail("tokenizer: Unicode normalisation failed: {}", utf8proc_errmsg(length));
  return std::string(reinterpret_cast<const char*>(mapped), static_cast<size_t>(length));
}

std::string restore_placeholders(std::string_view text, const std::vector<char32_t>& originals) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    size_t length = 0;
    char32_t cp = decode_at(text, pos, length);
    if (cp >= kPlaceholderBase && cp - kPlaceholderBase < originals.size()) {
      append_utf8(out, originals[cp - kPlaceholderBase]);
    } else {
      out.append(text.substr(pos, length));
    }
    pos += length;
  }
  return out;
}

// Bitmap over all code points of hf_nfc_unsafe(); built once.
bool is_nfc_unsafe(char32_t cp) {
  static const std::vector<uint64_t> bits = [] {
    std::vector<uint64_t> table(0x110000 / 64, 0);
    for (const CodePointRange& range : hf_nfc_unsafe()) {
      for (char32_t c = range.lo; c <= range.hi; ++c) table[c >> 6] |= uint64_t{1} << (c & 63);
    }
    return table;
  }();
  return cp < 0x110000 && ((bits[cp >> 6] >> (cp & 63)) & 1) != 0;
}

// One normal form over `text` with utf8proc, hiding what HF does not know.
std::string normalize_whole(std::string_view text, NormalForm form) {
  // NFC/NFD follow HF's canonical tables (see masked_code_points); NFKC/NFKD use utf8proc's
  // tables as they are.
  bool canonical = form == NormalForm::kNfc || form == NormalForm::kNfd;
  if (!canonical || !holds_masked(text)) return run_utf8proc(text, options_for(form), nullptr);
  Placeholders placeholders;
  std::string normalized = run_utf8proc(text, options_for(form), &placeholders);
  if (!placeholders.overflow) return restore_placeholders(normalized, placeholders.originals);
  if (log_once("tokenizer.normalizer_placeholders")) {
    spdlog::warn("tokenizer: text with more than {} code points unknown to HF's normaliser; normalised with "
                 "utf8proc's newer tables instead", kPlaceholderCount);
  }
  return run_utf8proc(text, options_for(form), nullptr);
}

// NFC that runs utf8proc only on the spans that need it: a maximal run of code points that are
// not NFC boundaries (is_nfc_unsafe), together with the boundary character just before it
// (the starter they may compose with). Everything else is copied: NFC(x c y) = NFC(x) NFC(c y)
// for a boundary character c.
void nfc_by_spans(std::string_view text, std::string& out) {
  out.clear();
  size_t copied = 0;     // text[0, copied) has been written to `out`
  size_t last_safe = 0;  // start of the last boundary character seen
  size_t pos = 0;
  while (pos < text.size()) {
    size_t length = 0;
    char32_t cp = static_cast<unsigned char>(text[pos]) < 0x80 ? (length = 1, static_cast<char32_t>(text[pos]))
                                                               : decode_at(text, pos, length);
    if (!is_nfc_unsafe(cp)) {
      last_safe = pos;
      pos += length;
      continue;
    }
    size_t span_begin = std::max(last_safe, copied);
    size_t span_end = pos + length;
    while (span_end < text.size()) {
      size_t next_length = 0;
      if (!is_nfc_unsafe(decode_at(text, span_end, next_length))) break;
      span_end += next_length;
    }
    out.append(text.substr(copied, span_begin - copied));
    out += normalize_whole(text.substr(span_begin, span_end - span_begin), NormalForm::kNfc);
    copied = span_end;
    last_safe = span_end;
    pos = span_end;
  }
  if (copied == 0) {
    out.assign(text);
  } else {
    out.append(text.substr(copied));
  }
}

}  // namespace

void Normalizer::apply(std::string_view text, std::string& out) const {
  if (forms_.empty() || is_ascii(text)) {
    out.assign(text);
    return;
  }
  if (forms_.size() == 1 && forms_[0] == NormalForm::kNfc) {
    nfc_by_spans(text, out);
    return;
  }
  out.assign(text);
  for (NormalForm form : forms_) out = normalize_whole(out, form);
}

}  // namespace lathe::tokenizer
