#include "tokenizer/added_tokens.h"

#include <utf8proc.h>

#include <algorithm>

namespace lathe::tokenizer {
namespace {

bool is_white_space(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

bool is_word_char(char32_t cp) {
  if (cp == '_') return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return true;
    default:
      return false;
  }
}

// Code point starting at `pos` (valid UTF-8) and its length.
char32_t decode_at(std::string_view text, size_t pos, size_t& length) {
  utf8proc_int32_t cp = 0;
  utf8proc_ssize_t n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + pos),
                                        static_cast<utf8proc_ssize_t>(text.size() - pos), &cp);
  length = n > 0 ? static_cast<size_t>(n) : 1;
  return n > 0 ? static_cast<char32_t>(cp) : 0xFFFD;
}

// Start of the code point that ends at `pos` (pos > 0).
size_t previous_start(std::string_view text, size_t pos) {
  --pos;
  while (pos > 0 && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) --pos;
  return pos;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(const std::vector<AddedTokenSpec>& tokens,
                                     const std::vector<std::string>& contents) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (contents[i].empty()) continue;
    entries_.push_back({contents[i], tokens[i].id, tokens[i].lstrip, tokens[i].rstrip, tokens[i].single_word});
  }
  for (uint32_t i = 0; i < entries_.size(); ++i) {
    by_first_byte_[static_cast<unsigned char>(entries_[i].content[0])].push_back(i);
    starts_[static_cast<unsigned char>(entries_[i].content[0])] = true;
  }
  for (auto& list : by_first_byte_) {
    std::stable_sort(list.begin(), list.end(),
                     [&](uint32_t a, uint32_t b) { return entries_[a].content.size() > entries_[b].content.size(); });
  }
}

void AddedTokenMatcher::find(std::string_view text, std::vector<AddedTokenMatch>& matches) const {
  if (entries_.empty()) return;
  size_t previous_end = 0;  // end of the previous accepted match
  size_t pos = 0;
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  while (pos < text.size()) {
    if (!starts_[bytes[pos]]) {  // fast skip over bytes no token starts with
      ++pos;
      continue;
    }
    const std::vector<uint32_t>& candidates = by_first_byte_[static_cast<unsigned char>(text[pos])];
    const Entry* hit = nullptr;
    for (uint32_t index : candidates) {
      const Entry& entry = entries_[index];
      if (text.compare(pos, entry.content.size(), entry.content) == 0) {
        hit = &entry;
        break;
      }
    }
    if (hit == nullptr) {
      ++pos;
      continue;
    }
    size_t begin = pos;
    size_t end = pos + hit->content.size();
    pos = end;  // the scan resumes after this match even if single_word drops it
    if (hit->single_word) {
      size_t length = 0;
      bool word_before = begin > 0 && is_word_char(decode_at(text, previous_start(text, begin), length));
      bool word_after = end < text.size() && is_word_char(decode_at(text, end, length));
      if (word_before || word_after) continue;
    }
    if (hit->lstrip) {
      while (begin > previous_end) {
        size_t start = previous_start(text, begin);
        size_t length = 0;
        if (!is_white_space(decode_at(text, start, length))) break;
        begin = start;
      }
    }
    if (hit->rstrip) {
      while (end < text.size()) {
        size_t length = 0;
        if (!is_white_space(decode_at(text, end, length))) break;
        end += length;
      }
      pos = end;
    }
    matches.push_back({begin, end, hit->id});
    previous_end = end;
  }
}

}  // namespace lathe::tokenizer
