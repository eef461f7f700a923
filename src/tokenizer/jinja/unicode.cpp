#include "tokenizer/jinja/unicode.h"

#include <utf8proc.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tokenizer/utf8.h"

namespace lathe::tokenizer::jinja {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Decodes one code point at text[pos], advancing pos. Invalid or truncated sequences yield
// U+FFFD and consume one byte.
char32_t decode_one(std::string_view text, size_t& pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(pos);
  if (lead < 0x80) {
    ++pos;
    return lead;
  }
  int extra = 0;
  char32_t cp = 0;
  if ((lead & 0xE0) == 0xC0) {
    extra = 1;
    cp = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    extra = 2;
    cp = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    extra = 3;
    cp = lead & 0x07;
  } else {
    ++pos;
    return kReplacement;
  }
  for (int i = 1; i <= extra; ++i) {
    if (pos + i >= text.size() || (byte(pos + i) & 0xC0) != 0x80) {
      ++pos;
      return kReplacement;
    }
    cp = (cp << 6) | (byte(pos + i) & 0x3F);
  }
  pos += extra + 1;
  return cp;
}

utf8proc_int32_t as_cp(char32_t c) { return static_cast<utf8proc_int32_t>(c); }

bool is_cased(char32_t c) {
  auto category = utf8proc_category(as_cp(c));
  return category == UTF8PROC_CATEGORY_LU || category == UTF8PROC_CATEGORY_LL || category == UTF8PROC_CATEGORY_LT ||
         utf8proc_isupper(as_cp(c)) || utf8proc_islower(as_cp(c));
}

bool is_alpha_cp(char32_t c) {
  auto category = utf8proc_category(as_cp(c));
  return category >= UTF8PROC_CATEGORY_LU && category <= UTF8PROC_CATEGORY_LO;
}

bool is_digit_cp(char32_t c) { return utf8proc_category(as_cp(c)) == UTF8PROC_CATEGORY_ND; }

bool is_numeric_cp(char32_t c) {
  auto category = utf8proc_category(as_cp(c));
  return category == UTF8PROC_CATEGORY_ND || category == UTF8PROC_CATEGORY_NL || category == UTF8PROC_CATEGORY_NO;
}

// Python str.isprintable() for one code point.
bool is_printable(char32_t c) {
  if (c == U' ') return true;
  switch (utf8proc_category(as_cp(c))) {
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CS:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_ZS:
    case UTF8PROC_CATEGORY_ZL:
    case UTF8PROC_CATEGORY_ZP:
      return false;
    default:
      return true;
  }
}

template <typename Predicate>
bool all_of_nonempty(std::string_view text, Predicate predicate) {
  if (text.empty()) return false;
  for (char32_t c : utf8_decode(text)) {
    if (!predicate(c)) return false;
  }
  return true;
}

}  // namespace

char32_t utf8_decode_at(std::string_view text, size_t& pos) { return decode_one(text, pos); }

std::u32string utf8_decode(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) out.push_back(decode_one(text, pos));
  return out;
}

void utf8_append(std::string& out, char32_t cp) { append_utf8(out, cp); }

std::string utf8_encode(std::u32string_view code_points) {
  std::string out;
  out.reserve(code_points.size());
  for (char32_t cp : code_points) utf8_append(out, cp);
  return out;
}

size_t utf8_length(std::string_view text) {
  size_t count = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    decode_one(text, pos);
    ++count;
  }
  return count;
}

size_t utf8_index_of_byte(std::string_view text, size_t byte_offset) {
  return utf8_length(text.substr(0, byte_offset));
}

bool py_is_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string py_strip(std::string_view text, const std::string* chars, bool left, bool right) {
  std::u32string cps = utf8_decode(text);
  std::u32string set = chars ? utf8_decode(*chars) : std::u32string();
  auto strippable = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : py_is_space(c); };
  size_t begin = 0;
  size_t end = cps.size();
  if (left) {
    while (begin < end && strippable(cps[begin])) ++begin;
  }
  if (right) {
    while (end > begin && strippable(cps[end - 1])) --end;
  }
  return utf8_encode(std::u32string_view(cps).substr(begin, end - begin));
}

std::string py_upper(std::string_view text) {
  std::string out;
  for (char32_t c : utf8_decode(text)) utf8_append(out, static_cast<char32_t>(utf8proc_toupper(as_cp(c))));
  return out;
}

std::string py_lower(std::string_view text) {
  std::string out;
  for (char32_t c : utf8_decode(text)) utf8_append(out, static_cast<char32_t>(utf8proc_tolower(as_cp(c))));
  return out;
}

std::string py_title(std::string_view text) {
  std::string out;
  bool previous_cased = false;
  for (char32_t c : utf8_decode(text)) {
    char32_t mapped = static_cast<char32_t>(previous_cased ? utf8proc_tolower(as_cp(c)) : utf8proc_totitle(as_cp(c)));
    utf8_append(out, mapped);
    previous_cased = is_cased(c);
  }
  return out;
}

std::string py_capitalize(std::string_view text) {
  std::string out;
  bool first = true;
  for (char32_t c : utf8_decode(text)) {
    utf8_append(out, static_cast<char32_t>(first ? utf8proc_totitle(as_cp(c)) : utf8proc_tolower(as_cp(c))));
    first = false;
  }
  return out;
}

bool py_is_upper(std::string_view text) {
  bool any_cased = false;
  for (char32_t c : utf8_decode(text)) {
    if (utf8proc_islower(as_cp(c)) || utf8proc_category(as_cp(c)) == UTF8PROC_CATEGORY_LT) return false;
    if (is_cased(c)) any_cased = true;
  }
  return any_cased;
}

bool py_is_lower(std::string_view text) {
  bool any_cased = false;
  for (char32_t c : utf8_decode(text)) {
    if (utf8proc_isupper(as_cp(c)) || utf8proc_category(as_cp(c)) == UTF8PROC_CATEGORY_LT) return false;
    if (is_cased(c)) any_cased = true;
  }
  return any_cased;
}

bool py_is_alpha(std::string_view text) { return all_of_nonempty(text, is_alpha_cp); }
bool py_is_digit(std::string_view text) { return all_of_nonempty(text, is_digit_cp); }
bool py_is_alnum(std::string_view text) {
  return all_of_nonempty(text, [](char32_t c) { return is_alpha_cp(c) || is_numeric_cp(c); });
}
bool py_is_space_str(std::string_view text) { return all_of_nonempty(text, py_is_space); }

std::string py_repr_string(std::string_view text) {
  std::u32string cps = utf8_decode(text);
  bool has_single = cps.find(U'\'') != std::u32string::npos;
  bool has_double = cps.find(U'"') != std::u32string::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  char buffer[16];
  for (char32_t c : cps) {
    if (c == static_cast<char32_t>(quote) || c == U'\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == U'\t') {
      out += "\\t";
    } else if (c == U'\n') {
      out += "\\n";
    } else if (c == U'\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      std::snprintf(buffer, sizeof(buffer), "\\x%02x", static_cast<unsigned>(c));
      out += buffer;
    } else if (c < 0x7F || is_printable(c)) {
      utf8_append(out, c);
    } else if (c <= 0xFF) {
      std::snprintf(buffer, sizeof(buffer), "\\x%02x", static_cast<unsigned>(c));
      out += buffer;
    } else if (c <= 0xFFFF) {
      std::snprintf(buffer, sizeof(buffer), "\\u%04x", static_cast<unsigned>(c));
      out += buffer;
    } else {
      std::snprintf(buffer, sizeof(buffer), "\\U%08x", static_cast<unsigned>(c));
      out += buffer;
    }
  }
  out.push_back(quote);
  return out;
}

std::string py_repr_float(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Shortest round-trip digits in scientific form: "-d.ddde+XX" (or "de+XX").
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  std::string sci(buffer, result.ptr);
  bool negative = !sci.empty() && sci[0] == '-';
  if (negative) sci.erase(0, 1);
  size_t e_pos = sci.find('e');
  std::string mantissa = sci.substr(0, e_pos);
  int exponent = std::atoi(sci.c_str() + e_pos + 1);
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits.push_back(c);
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  // Python's repr: value = 0.DIGITS x 10^decpt; exponent form when decpt <= -4 or decpt > 16.
  int decpt = exponent + 1;
  std::string out = negative ? "-" : "";
  if (digits == "0") return out.append("0.0");
  int ndigits = static_cast<int>(digits.size());
  if (decpt <= -4 || decpt > 16) {
    out.push_back(digits[0]);
    if (ndigits > 1) out.append(1, '.').append(digits, 1, std::string::npos);
    char exp_buffer[16];
    std::snprintf(exp_buffer, sizeof(exp_buffer), "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out.append(exp_buffer);
  } else if (decpt <= 0) {
    out.append("0.").append(static_cast<size_t>(-decpt), '0').append(digits);
  } else if (decpt >= ndigits) {
    out.append(digits).append(static_cast<size_t>(decpt - ndigits), '0').append(".0");
  } else {
    out.append(digits, 0, static_cast<size_t>(decpt)).append(1, '.').append(digits, static_cast<size_t>(decpt));
  }
  return out;
}

}  // namespace lathe::tokenizer::jinja
