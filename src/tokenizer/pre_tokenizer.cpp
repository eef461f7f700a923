#include "tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "core/error.h"
#include "core/log.h"

namespace lathe::tokenizer {
namespace {

// The Unicode White_Space property (stable since Unicode 6.3), as class items.
constexpr std::string_view kWhiteSpaceItems =
    "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

size_t next_code_point(std::string_view text, size_t pos) {
  ++pos;
  while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
  return pos;
}

}  // namespace

std::string translate_pattern(std::string_view pattern, const std::string& where) {
  std::string out;
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
  return out;
}

struct SplitPreTokenizer::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

SplitPreTokenizer::SplitPreTokenizer(std::string_view pattern, const std::string& where)
    : code_(std::make_unique<Code>()), where_(where) {
  std::string translated = translate_pattern(pattern, where);
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  code_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                              PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
  if (code_->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    fail("{}: regex does not compile (PCRE2, offset {} of the translated pattern '{}'): {}", where, error_offset,
         translated, reinterpret_cast<const char*>(message));
  }
  jit_ = pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE) == 0;
  if (!jit_ && log_once("tokenizer.pcre2_no_jit")) {
    spdlog::warn("tokenizer: PCRE2 JIT unavailable, using the interpreter for the Split regex");
  }
}

SplitPreTokenizer::~SplitPreTokenizer() = default;
SplitPreTokenizer::SplitPreTokenizer(SplitPreTokenizer&&) noexcept = default;
SplitPreTokenizer& SplitPreTokenizer::operator=(SplitPreTokenizer&&) noexcept = default;

void SplitPreTokenizer::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  if (text.empty()) return;
  // Match data is per call: pcre2_match_data is not shareable between threads.
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create_from_pattern(code_->code, nullptr), &pcre2_match_data_free);
  if (!match) fail("tokenizer: out of memory for regex match data");
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
  size_t last = 0;    // end of the last emitted piece
  size_t offset = 0;  // where the next search starts
  while (offset < text.size()) {
    int rc = pcre2_match(code_->code, subject, text.size(), offset, PCRE2_NO_UTF_CHECK, match.get(), nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      // A pathological input exhausted the JIT stack: redo this search with the interpreter,
      // which keeps its backtracking state on the heap.
      rc = pcre2_match(code_->code, subject, text.size(), offset, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, match.get(),
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
