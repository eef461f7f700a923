#include "tokenizer/jinja/lexer.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "tokenizer/jinja/unicode.h"
#include "tokenizer/jinja/value.h"

namespace lathe::tokenizer::jinja {
namespace {

// "\r\n" and "\r" become "\n"; one trailing newline is dropped (keep_trailing_newline=False).
std::string normalize_source(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out.push_back(source[i]);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

class Lexer {
 public:
  explicit Lexer(std::string_view source) : src_(normalize_source(source)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      if (!lex_root()) break;
    }
    Token eof;
    eof.type = TokenType::kEof;
    locate(eof, src_.size());
    tokens_.push_back(eof);
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail_at(size_t pos, const std::string& message) {
    auto [line, column] = line_column(pos);
    throw TemplateError(fmt::format("line {} column {}: {}", line, column, message), true);
  }

  std::pair<int, int> line_column(size_t pos) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), pos);
    size_t line_index = static_cast<size_t>(it - line_starts_.begin()) - 1;
    return {static_cast<int>(line_index + 1), static_cast<int>(pos - line_starts_[line_index] + 1)};
  }

  void locate(Token& token, size_t pos) const {
    auto [line, column] = line_column(pos);
    token.line = line;
    token.column = column;
  }

  void emit(TokenType type, std::string text, size_t pos) {
    Token token;
    token.type = type;
    token.text = std::move(text);
    locate(token, pos);
    tokens_.push_back(std::move(token));
  }

  bool starts_with(size_t pos, std::string_view what) const {
    return pos + what.size() <= src_.size() && src_.compare(pos, what.size(), what) == 0;
  }

  // Skips Python whitespace (what `\s*` matches) from pos.
  size_t skip_space(size_t pos) const {
    while (pos < src_.size()) {
      size_t next = pos;
      if (!py_is_space(utf8_decode_at(src_, next))) break;
      pos = next;
    }
    return pos;
  }

  // Emits the text before a tag after whitespace control: "-" strips all trailing whitespace;
  // otherwise, for block and comment tags not marked "+", lstrip_blocks removes the spaces
  // between the line start and the tag when nothing else is on that line.
  void emit_data_before_tag(size_t start, size_t end, char sign, bool lstrip_allowed) {
    std::string text = src_.substr(start, end - start);
    if (sign == '-') {
      text = py_strip(text, nullptr, false, true);
    } else if (sign != '+' && lstrip_allowed) {
      size_t line_pos = text.rfind('\n');
      line_pos = line_pos == std::string::npos ? 0 : line_pos + 1;
      if (line_pos > 0 || line_starting_) {
        std::string tail = text.substr(line_pos);
        if (!tail.empty() && py_strip(tail, nullptr, true, false).empty()) text.resize(line_pos);
      }
    }
    if (!text.empty()) emit(TokenType::kData, std::move(text), start);
  }

  // Finds the next "{{", "{%" or "{#" at or after pos; npos if none.
  size_t find_tag(size_t pos) const {
    while (true) {
      pos = src_.find('{', pos);
      if (pos == std::string::npos || pos + 1 >= src_.size()) return std::string::npos;
      char next = src_[pos + 1];
      if (next == '{' || next == '%' || next == '#') return pos;
      ++pos;
    }
  }

  // Matches `{%[-+]?\s*raw\s*(-%}\s*|%})` at pos; returns the end of the match or npos.
  size_t match_raw_begin(size_t pos) const {
    size_t p = pos + 2;
    if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
    p = skip_space(p);
    if (!starts_with(p, "raw")) return std::string::npos;
    p = skip_space(p + 3);
    if (starts_with(p, "-%}")) return skip_space(p + 3);
    if (starts_with(p, "%}")) return p + 2;
    return std::string::npos;
  }

  // Returns false when the source is exhausted.
  bool lex_root() {
    size_t tag = find_tag(pos_);
    if (tag == std::string::npos) {
      emit(TokenType::kData, src_.substr(pos_), pos_);
      pos_ = src_.size();
      return false;
    }
    char kind = src_[tag + 1];
    size_t after = tag + 2;
    char sign = 0;
    if (after < src_.size() && (src_[after] == '-' || src_[after] == '+')) sign = src_[after++];
    if (kind == '%') {
      size_t raw_end = match_raw_begin(tag);
      if (raw_end != std::string::npos) {
        emit_data_before_tag(pos_, tag, sign, true);
        line_starting_ = src_[raw_end - 1] == '\n';
        lex_raw(raw_end);
        return true;
      }
    }
    emit_data_before_tag(pos_, tag, sign, kind != '{');
    if (kind == '#') {
      lex_comment(tag, after);
    } else {
      lex_tag(tag, after, kind == '%');
    }
    return true;
  }

  void lex_raw(size_t content_start) {
    size_t search = content_start;
    while (true) {
      size_t q = src_.find("{%", search);
      if (q == std::string::npos) fail_at(content_start, "Missing end of raw directive");
      size_t p = q + 2;
      char sign = 0;
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) sign = src_[p++];
      p = skip_space(p);
      if (starts_with(p, "endraw")) {
        p = skip_space(p + 6);
        size_t end = std::string::npos;
        if (starts_with(p, "+%}")) {
          end = p + 3;
        } else if (starts_with(p, "-%}")) {
          end = skip_space(p + 3);
        } else if (starts_with(p, "%}")) {
          end = p + 2;
          if (end < src_.size() && src_[end] == '\n') ++end;
        }
        if (end != std::string::npos) {
          emit_data_before_tag(content_start, q, sign, true);
          line_starting_ = src_[end - 1] == '\n';
          pos_ = end;
          return;
        }
      }
      search = q + 2;
    }
  }

  void lex_comment(size_t tag, size_t content_start) {
    size_t q = src_.find("#}", content_start);
    if (q == std::string::npos) fail_at(tag, "Missing end of comment tag");
    size_t end = q + 2;
    if (q > content_start && src_[q - 1] == '-') {
      end = skip_space(end);
    } else if (!(q > content_start && src_[q - 1] == '+')) {
      if (end < src_.size() && src_[end] == '\n') ++end;  // trim_blocks
    }
    line_starting_ = src_[end - 1] == '\n';
    pos_ = end;
  }

  void lex_tag(size_t tag, size_t pos, bool block) {
    emit(block ? TokenType::kBlockBegin : TokenType::kVariableBegin, "", tag);
    std::vector<char> balance;
    while (true) {
      if (pos >= src_.size()) fail_at(tag, block ? "unexpected end of template, missing '%}'" : "unexpected end of template, missing '}}'");
      if (balance.empty()) {
        size_t end = std::string::npos;
        if (block) {
          if (starts_with(pos, "-%}")) {
            end = skip_space(pos + 3);
          } else if (starts_with(pos, "+%}")) {
            end = pos + 3;
          } else if (starts_with(pos, "%}")) {
            end = pos + 2;
            if (end < src_.size() && src_[end] == '\n') ++end;  // trim_blocks
          }
        } else if (starts_with(pos, "-}}")) {
          end = skip_space(pos + 3);
        } else if (starts_with(pos, "}}")) {
          end = pos + 2;
        }
        if (end != std::string::npos) {
          emit(block ? TokenType::kBlockEnd : TokenType::kVariableEnd, "", pos);
          line_starting_ = src_[end - 1] == '\n';
          pos_ = end;
          return;
        }
      }
      size_t spaced = skip_space(pos);
      if (spaced != pos) {
        pos = spaced;
        continue;
      }
      pos = lex_expression_token(pos, balance);
    }
  }

  // Lexes one number, name, string or operator at pos; returns the position after it.
  size_t lex_expression_token(size_t pos, std::vector<char>& balance) {
    char c = src_[pos];
    if (is_digit(c)) return lex_number(pos);
    if (is_name_start(c)) {
      size_t end = pos;
      while (end < src_.size() && is_name_char(src_[end])) ++end;
      if (end < src_.size() && static_cast<unsigned char>(src_[end]) >= 0x80) {
        fail_at(end, "non-ASCII characters in names are not supported");
      }
      emit(TokenType::kName, src_.substr(pos, end - pos), pos);
      return end;
    }
    if (c == '\'' || c == '"') return lex_string(pos);
    static const char* kOperators[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[", "]",
                                       "(",  ")",  "{",  "}",  ">",  "<",  "=", ".", ":", "|", ",", ";"};
    for (const char* op : kOperators) {
      std::string_view view(op);
      if (!starts_with(pos, view)) continue;
      if (view == "(" || view == "[" || view == "{") {
        balance.push_back(view == "(" ? ')' : view == "[" ? ']' : '}');
      } else if (view == ")" || view == "]" || view == "}") {
        if (balance.empty()) fail_at(pos, fmt::format("unexpected '{}'", view));
        if (balance.back() != view[0]) fail_at(pos, fmt::format("unexpected '{}', expected '{}'", view, balance.back()));
        balance.pop_back();
      }
      emit(TokenType::kOperator, std::string(view), pos);
      return pos + view.size();
    }
    if (static_cast<unsigned char>(c) >= 0x80) fail_at(pos, "non-ASCII character outside a string literal");
    fail_at(pos, fmt::format("unexpected char '{}'", c));
  }

  // Digits with single '_' separators: (\d+_)*\d+. Returns the end, or npos when none.
  size_t scan_digits(size_t pos, bool (*digit)(char)) const {
    if (pos >= src_.size() || !digit(src_[pos])) return std::string::npos;
    while (pos < src_.size()) {
      if (digit(src_[pos])) {
        ++pos;
      } else if (src_[pos] == '_' && pos + 1 < src_.size() && digit(src_[pos + 1])) {
        pos += 2;
      } else {
        break;
      }
    }
    return pos;
  }

  size_t lex_number(size_t pos) {
    auto dec = [](char ch) { return is_digit(ch); };
    // Floats first, as jinja2's rules do: digits then (.digits)? e[+-]?digits, or digits .digits.
    bool after_dot = pos > 0 && src_[pos - 1] == '.';
    size_t int_end = scan_digits(pos, dec);
    if (!after_dot) {
      size_t p = int_end;
      size_t frac_end = std::string::npos;
      if (p < src_.size() && src_[p] == '.') frac_end = scan_digits(p + 1, dec);
      size_t mantissa_end = frac_end != std::string::npos ? frac_end : p;
      size_t float_end = std::string::npos;
      if (mantissa_end < src_.size() && (src_[mantissa_end] == 'e' || src_[mantissa_end] == 'E')) {
        size_t e = mantissa_end + 1;
        if (e < src_.size() && (src_[e] == '+' || src_[e] == '-')) ++e;
        float_end = scan_digits(e, dec);
      }
      if (float_end == std::string::npos && frac_end != std::string::npos) float_end = frac_end;
      if (float_end != std::string::npos) {
        std::string text;
        for (size_t i = pos; i < float_end; ++i) {
          if (src_[i] != '_') text.push_back(src_[i]);
        }
        Token token;
        token.type = TokenType::kFloat;
        token.text = src_.substr(pos, float_end - pos);
        token.real = std::strtod(text.c_str(), nullptr);
        locate(token, pos);
        tokens_.push_back(std::move(token));
        return float_end;
      }
    }
    // Integers: 0b / 0o / 0x prefixes, [1-9](_?\d)*, or 0(_?0)*.
    int base = 10;
    size_t digits_start = pos;
    size_t end = std::string::npos;
    char prefix = pos + 1 < src_.size() ? static_cast<char>(src_[pos + 1] | 0x20) : 0;
    if (src_[pos] == '0' && (prefix == 'b' || prefix == 'o' || prefix == 'x')) {
      base = prefix == 'b' ? 2 : prefix == 'o' ? 8 : 16;
      auto valid = [&](char ch) {
        if (base == 2) return ch == '0' || ch == '1';
        if (base == 8) return ch >= '0' && ch <= '7';
        return is_digit(ch) || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f');
      };
      size_t p = pos + 2;
      while (p < src_.size()) {
        if (valid(src_[p])) {
          ++p;
        } else if (src_[p] == '_' && p + 1 < src_.size() && valid(src_[p + 1])) {
          p += 2;
        } else {
          break;
        }
      }
      if (p > pos + 2) {
        end = p;
        digits_start = pos + 2;
      }
    }
    if (end == std::string::npos) {
      base = 10;
      if (src_[pos] == '0') {
        end = pos + 1;
        while (end < src_.size()) {
          if (src_[end] == '0') {
            ++end;
          } else if (src_[end] == '_' && end + 1 < src_.size() && src_[end + 1] == '0') {
            end += 2;
          } else {
            break;
          }
        }
      } else {
        end = int_end;
      }
    }
    std::string digits;
    for (size_t i = digits_start; i < end; ++i) {
      if (src_[i] != '_') digits.push_back(src_[i]);
    }
    errno = 0;
    char* parsed_end = nullptr;
    long long value = std::strtoll(digits.c_str(), &parsed_end, base);
    if (errno == ERANGE) fail_at(pos, "integer literal out of range (int64)");
    Token token;
    token.type = TokenType::kInteger;
    token.text = src_.substr(pos, end - pos);
    token.integer = value;
    locate(token, pos);
    tokens_.push_back(std::move(token));
    return end;
  }

  size_t lex_string(size_t pos) {
    char quote = src_[pos];
    size_t p = pos + 1;
    while (p < src_.size() && src_[p] != quote) {
      if (src_[p] == '\\') ++p;
      ++p;
    }
    if (p >= src_.size()) fail_at(pos, "unterminated string literal");
    auto [line, column] = line_column(pos);
    Token token;
    token.type = TokenType::kString;
    token.text = unescape_string_literal(std::string_view(src_).substr(pos + 1, p - pos - 1), line, column);
    token.line = line;
    token.column = column;
    tokens_.push_back(std::move(token));
    return p + 1;
  }

  std::string src_;
  std::vector<size_t> line_starts_;
  size_t pos_ = 0;
  bool line_starting_ = true;
  std::vector<Token> tokens_;
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(c | 0x20);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

std::string unescape_string_literal(std::string_view body, int line, int column) {
  auto fail_here = [&](const std::string& message) -> void {
    throw TemplateError(fmt::format("line {} column {}: {}", line, column, message), true);
  };
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (i + 1 >= body.size()) {
      fail_here("\\ at end of string");
      break;
    }
    char e = body[++i];
    switch (e) {
      case '\n': break;  // line continuation
      case '\\': out.push_back('\\'); break;
      case '\'': out.push_back('\''); break;
      case '"': out.push_back('"'); break;
      case 'a': out.push_back('\a'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'v': out.push_back('\v'); break;
      case 'x':
      case 'u':
      case 'U': {
        size_t count = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (size_t k = 0; k < count; ++k) {
          int h = i + 1 + k < body.size() ? hex_value(body[i + 1 + k]) : -1;
          if (h < 0) fail_here(fmt::format("truncated \\{} escape in string literal", e));
          cp = cp * 16 + static_cast<uint32_t>(h);
        }
        if (cp > 0x10FFFF) fail_here("illegal Unicode character in string literal");
        i += count;
        utf8_append(out, static_cast<char32_t>(cp));
        break;
      }
      case 'N': fail_here("\\N{...} escapes are not supported"); break;
      default:
        if (e >= '0' && e <= '7') {
          uint32_t cp = static_cast<uint32_t>(e - '0');
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k) {
            cp = cp * 8 + static_cast<uint32_t>(body[++i] - '0');
          }
          utf8_append(out, static_cast<char32_t>(cp));
        } else if (static_cast<unsigned char>(e) >= 0x80) {
          fail_here("a backslash before a non-ASCII character is not supported");
        } else {
          out.push_back('\\');  // unknown escapes stay as written
          out.push_back(e);
        }
    }
  }
  return out;
}

std::vector<Token> tokenize(std::string_view source) { return Lexer(source).run(); }

}  // namespace lathe::tokenizer::jinja
