#include "tokenizer/normalizer.h"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>
#include <utility>

#include "core/error.h"

namespace lathe::tokenizer {
namespace {

bool is_ascii(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// Ranges of code points that are NFC-stable (NFC_Quick_Check=Yes), have combining class 0 and
// are never the second element of a canonical composition: a text made only of these is its
// own NFC. Checked against Python's unicodedata (Unicode 14) for every code point in range.
constexpr std::pair<char32_t, char32_t> kNfcInert[] = {
    {0x0000, 0x02FF},   {0x0400, 0x0482},   {0x2002, 0x206F}, {0x3000, 0x3029}, {0x3040, 0x3096},
    {0x30A0, 0x30FF},   {0x4E00, 0x9FFF},   {0xAC00, 0xD7A3}, {0xFE00, 0xFE0F}, {0xFF00, 0xFFEF},
    {0x1F000, 0x1FAFF}, {0xE0000, 0xE007F}};

bool is_nfc_inert(std::string_view text) {
  const auto* data = reinterpret_cast<const unsigned char*>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    unsigned char lead = data[pos];
    if (lead < 0x80) {
      ++pos;
      continue;
    }
    // Valid UTF-8 is a precondition of apply().
    char32_t cp;
    size_t length;
    if (lead < 0xE0) {
      cp = lead & 0x1Fu;
      length = 2;
    } else if (lead < 0xF0) {
      cp = lead & 0x0Fu;
      length = 3;
    } else {
      cp = lead & 0x07u;
      length = 4;
    }
    if (pos + length > text.size()) return false;
    for (size_t i = 1; i < length; ++i) cp = (cp << 6) | (data[pos + i] & 0x3Fu);
    bool inert = false;
    for (const auto& [lo, hi] : kNfcInert) {
      if (cp < lo) break;
      if (cp <= hi) {
        inert = true;
        break;
      }
    }
    if (!inert) return false;
    pos += length;
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

}  // namespace

void Normalizer::apply(std::string_view text, std::string& out) const {
  out.assign(text);
  if (forms_.empty() || is_ascii(text)) return;
  if (forms_.size() == 1 && forms_[0] == NormalForm::kNfc && is_nfc_inert(text)) return;
  for (NormalForm form : forms_) {
    utf8proc_uint8_t* mapped = nullptr;
    // An explicit length (no UTF8PROC_NULLTERM) keeps embedded NUL characters.
    utf8proc_ssize_t length = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(out.data()),
                                           static_cast<utf8proc_ssize_t>(out.size()), &mapped,
                                           static_cast<utf8proc_option_t>(options_for(form)));
    std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(mapped, &std::free);
    if (length < 0) fail("tokenizer: Unicode normalisation failed: {}", utf8proc_errmsg(length));
    out.assign(reinterpret_cast<const char*>(mapped), static_cast<size_t>(length));
  }
}

}  // namespace lathe::tokenizer
