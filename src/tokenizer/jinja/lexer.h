#pragma once
// Lexer for lathe's Jinja subset, configured as transformers configures jinja2 for chat
// templates: trim_blocks=True (the first newline after a block or comment tag is dropped),
// lstrip_blocks=True (spaces and tabs before a block or comment tag at the start of a line are
// dropped), keep_trailing_newline=False (one trailing newline of the source is dropped), "\r\n"
// and "\r" read as "\n". "{%-"/"-%}" (and the {{ }} / {# #} forms) strip all whitespace on that
// side; "{%+"/"+%}" keep it. {% raw %}...{% endraw %} is copied verbatim. Comments vanish.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lathe::tokenizer::jinja {

enum class TokenType : uint8_t {
  kData,           // template text, copied to the output
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kName,           // identifier (keywords such as if/for/and are names too)
  kString,         // string literal, `text` holds the unescaped value
  kInteger,        // `integer` holds the value
  kFloat,          // `real` holds the value
  kOperator,       // `text` holds the operator: + - * / // % ** ~ == != < > <= >= = . : | , ; ( ) [ ] { }
  kEof,
};

struct Token {
  TokenType type = TokenType::kEof;
  std::string text;
  int64_t integer = 0;
  double real = 0.0;
  int line = 1;
  int column = 1;
};

// Splits a template into tokens, ending with one kEof. Throws TemplateError naming the line and
// column for an unterminated tag, comment or string, an unknown character, or an unbalanced
// bracket.
std::vector<Token> tokenize(std::string_view source);

// Python's unicode-escape decoding of a string literal's body (the text between the quotes).
std::string unescape_string_literal(std::string_view body, int line, int column);

}  // namespace lathe::tokenizer::jinja
