#include "tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>

#include "core/error.h"
#include "core/log.h"
#include "tokenizer/unicode_classes.h"

namespace lathe::tokenizer {
namespace {

// The Unicode White_Space property (stable since Unicode 6.3), as class items.
constexpr std::string_view kWhiteSpaceItems =
    "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

// Class items for the code points Oniguruma's \p{category} matches beyond PCRE2's tables.
std::string extra_items(const CategoryDelta& delta) {
  std::string items;
  for (const CodePointRange& range : delta.extra) {
    items += fmt::format("\\x{{{:X}}}", static_cast<uint32_t>(range.lo));
    if (range.hi != range.lo) items += fmt::format("-\\x{{{:X}}}", static_cast<uint32_t>(range.hi));
  }
  return items;
}

size_t next_code_point(std::string_view text, size_t pos) {
  ++pos;
  while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
  return pos;
}

}  // namespace

TranslatedPattern translate_pattern(std::string_view pattern, const std::string& where, bool category_deltas) {
  TranslatedPattern result;
  std::string& out = result.pcre2;
  out.reserve(pattern.size() + 64);
  bool in_class = false;
  size_t class_start = 0;  // index in `pattern` of the first item of the current class
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\') {
      if (i + 1 >= pattern.size()) fail("{}: regex ends with a lone backslash", where);
      char e = pattern[++i];
      if (e == 's') {
        if (in_class) {
          out += kWhiteSpaceItems;
        } else {
          out += '[';
          out += kWhiteSpaceItems;
          out += ']';
        }
      } else if (e == 'S') {
        if (in_class) fail("{}: \\S inside a character class is not supported", where);
        out += "[^";
        out += kWhiteSpaceItems;
        out += ']';
      } else if (e == 'Q') {
        fail("{}: \\Q...\\E quoting is not supported", where);
      } else if (e == 'p' || e == 'P' || e == 'd' || e == 'D') {
        // A general category (\pX, \p{Name}; \d is \p{Nd} in both engines) gets the code points
        // Oniguruma's newer tables add to it.
        std::string_view name = "Nd";
        std::string_view token = pattern.substr(i - 1, 2);
        if (e == 'p' || e == 'P') {
          size_t name_begin = i + 1, name_end = i + 2;
          if (name_begin >= pattern.size()) fail("{}: regex ends inside \\{}", where, e);
          if (pattern[name_begin] == '{') {
            name_end = pattern.find('}', name_begin);
            if (name_end == std::string_view::npos) fail("{}: unterminated \\{}{{...}} at offset {}", where, e, i - 1);
            name = pattern.substr(name_begin + 1, name_end - name_begin - 1);
            token = pattern.substr(i - 1, name_end + 2 - i);
          } else {
            name = pattern.substr(name_begin, 1);
            token = pattern.substr(i - 1, 3);
          }
          i += token.size() - 2;
        }
        bool negated = e == 'P' || e == 'D';
        std::optional<CategoryDelta> delta =
            category_deltas ? onig_category_delta(name) : std::optional<CategoryDelta>();
        if (delta && delta->missing > 0 && log_once(fmt::format("tokenizer.category_missing.{}", name))) {
          spdlog::warn("tokenizer: {} uses \\p{{{}}}: PCRE2 matches {} code point(s) that HF's Oniguruma no longer "
                       "counts in it", where, name, delta->missing);
        }
        if (delta) result.delta_ranges.insert(result.delta_ranges.end(), delta->extra.begin(), delta->extra.end());
        if (!delta || delta->extra.empty()) {
          out.append(token);
        } else if (!negated) {
          if (!in_class) out += '[';
          out.append(token);
          out += extra_items(*delta);
          if (!in_class) out += ']';
        } else {
          if (in_class) fail("{}: {} inside a character class is not supported", where, token);
          out += "[^\\p{";
          out.append(name);
          out += '}';
          out += extra_items(*delta);
          out += ']';
        }
      } else if ((e == 'w' || e == 'W' || e == 'b' || e == 'B') && log_once("tokenizer.regex_word_class")) {
        // Oniguruma's Unicode \w (letters, marks, Nd, Pc, Nl...) is wider than PCRE2 10.42's
        // (\p{L}, \p{N}, '_'); no Qwen pattern uses it.
        spdlog::warn("tokenizer: {} uses \\{}: word-character semantics differ slightly from HF (Oniguruma)", where, e);
        out += c;
        out += e;
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      class_start = i + 1;
      continue;
    }
    if (in_class && c == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {
      // POSIX class [:name:] inside a bracket expression: copy through its closing ":]".
      size_t end = pattern.find(":]", i + 2);
      if (end == std::string_view::npos) fail("{}: unterminated POSIX class at offset {}", where, i);
      out.append(pattern.substr(i, end + 2 - i));
      i = end + 1;
      continue;
    }
    if (in_class && c == ']' && i != class_start) in_class = false;
    out += c;
  }
  if (in_class) fail("{}: unterminated character class", where);
  // Union of the appended ranges, sorted and merged, for SplitPreTokenizer's dispatch.
  std::sort(result.delta_ranges.begin(), result.delta_ranges.end(),
            [](const CodePointRange& a, const CodePointRange& b) { return a.lo < b.lo; });
  std::vector<CodePointRange> merged;
  for (const CodePointRange& range : result.delta_ranges) {
    if (!merged.empty() && range.lo <= merged.back().hi + 1) {
      merged.back().hi = std::max(merged.back().hi, range.hi);
    } else {
      merged.push_back(range);
    }
  }
  result.delta_ranges = std::move(merged);
  return result;
}

struct SplitPreTokenizer::Code {
  // `full` has the category deltas appended; `plain` (null when identical) does not, and is used
  // for text holding none of the delta code points, where both match identically and `plain`
  // is faster (its classes have no long range lists to scan).
  pcre2_code* full = nullptr;
  pcre2_code* plain = nullptr;
  std::vector<CodePointRange> delta_ranges;  // sorted, disjoint
  ~Code() {
    pcre2_code_free(full);
    pcre2_code_free(plain);
  }
};

namespace {

pcre2_code* compile(const std::string& translated, const std::string& where, bool& jit) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    fail("{}: regex does not compile (PCRE2, offset {} of the translated pattern '{}'): {}", where, error_offset,
         translated, reinterpret_cast<const char*>(message));
  }
  jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  if (!jit && log_once("tokenizer.pcre2_no_jit")) {
    spdlog::warn("tokenizer: PCRE2 JIT unavailable, using the interpreter for the Split regex");
  }
  return code;
}

// Whether `text` (valid UTF-8) holds a code point inside one of `ranges` (sorted; all >= U+0800).
bool holds_any(std::string_view text, const std::vector<CodePointRange>& ranges) {
  if (ranges.empty()) return false;
  const auto* data = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t pos = 0; pos < text.size(); ++pos) {
    if (data[pos] < 0xE0) continue;  // ASCII, continuation bytes and 2-byte sequences (< U+0800)
    char32_t cp = data[pos] < 0xF0 ? data[pos] & 0x0Fu : data[pos] & 0x07u;
    size_t length = data[pos] < 0xF0 ? 3 : 4;
    for (size_t k = 1; k < length && pos + k < text.size(); ++k) cp = (cp << 6) | (data[pos + k] & 0x3Fu);
    auto it = std::upper_bound(ranges.begin(), ranges.end(), cp,
                               [](char32_t value, const CodePointRange& range) { return value < range.lo; });
    if (it != ranges.begin() && cp <= std::prev(it)->hi) return true;
    pos += length - 1;
  }
  return false;
}

}  // namespace

SplitPreTokenizer::SplitPreTokenizer(std::string_view pattern, const std::string& where)
    : code_(std::make_unique<Code>()), where_(where) {
  TranslatedPattern full = translate_pattern(pattern, where, /*category_deltas=*/true);
  code_->full = compile(full.pcre2, where, jit_);
  code_->delta_ranges = std::move(full.delta_ranges);
  if (!code_->delta_ranges.empty()) {
    bool plain_jit = false;
    code_->plain = compile(translate_pattern(pattern, where, /*category_deltas=*/false).pcre2, where, plain_jit);
    jit_ = jit_ && plain_jit;
  }
}

SplitPreTokenizer::~SplitPreTokenizer() = default;
SplitPreTokenizer::SplitPreTokenizer(SplitPreTokenizer&&) noexcept = default;
SplitPreTokenizer& SplitPreTokenizer::operator=(SplitPreTokenizer&&) noexcept = default;

void SplitPreTokenizer::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  if (text.empty()) return;
  const pcre2_code* code = code_->plain != nullptr && !holds_any(text, code_->delta_ranges) ? code_->plain : code_->full;
  // Match data is per call: pcre2_match_data is not shareable between threads.
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create_from_pattern(code, nullptr), &pcre2_match_data_free);
  if (!match) fail("tokenizer: out of memory for regex match data");
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
  size_t last = 0;    // end of the last emitted piece
  size_t offset = 0;  // where the next search starts
  while (offset < text.size()) {
    int rc = pcre2_match(code, subject, text.size(), offset, PCRE2_NO_UTF_CHECK, match.get(), nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      // A pathological input exhausted the JIT stack: redo this search with the interpreter,
      // which keeps its backtracking state on the heap.
      rc = pcre2_match(code, subject, text.size(), offset, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, match.get(),
                       nullptr);
    }
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof(message));
      fail("{}: regex match failed at byte {}: {}", where_, offset, reinterpret_cast<const char*>(message));
    }
    size_t start = ovector[0];
    size_t end = ovector[1];
    if (end <= start) {  // an empty match splits nothing; search again one code point later
      offset = next_code_point(text, start);
      continue;
    }
    if (start > last) pieces.push_back(text.substr(last, start - last));
    pieces.push_back(text.substr(start, end - start));
    last = end;
    offset = end;
  }
  if (last < text.size()) pieces.push_back(text.substr(last));
}

}  // namespace lathe::tokenizer
