#pragma once
// UTF-8 helpers that give the Jinja interpreter Python's str semantics: Python indexes, slices,
// measures and reverses strings by code point, and its whitespace and case rules are Unicode's.
// Strings inside the interpreter are UTF-8 std::string; invalid UTF-8 bytes decode as U+FFFD.
#include <cstddef>
#include <string>
#include <string_view>

namespace lathe::tokenizer::jinja {

// Decodes a whole string into code points / encodes code points back to UTF-8.
std::u32string utf8_decode(std::string_view text);
std::string utf8_encode(std::u32string_view code_points);
void utf8_append(std::string& out, char32_t code_point);
// Decodes the code point at byte `pos` and advances `pos` past it.
char32_t utf8_decode_at(std::string_view text, size_t& pos);

// Number of code points (Python len(str)).
size_t utf8_length(std::string_view text);

// Code point index of the byte offset `byte_offset` (which must lie on a code point boundary).
size_t utf8_index_of_byte(std::string_view text, size_t byte_offset);

// Python str.isspace() for one code point (also what `\s` matches in Python's re).
bool py_is_space(char32_t c);

// Python's str.strip family. `chars` null: strip Python whitespace; else strip any code point in
// *chars.
std::string py_strip(std::string_view text, const std::string* chars, bool left, bool right);

// Python str.upper()/lower() (simple one-to-one case mappings via utf8proc), str.title(),
// str.capitalize(), and the predicates isupper/islower/isalpha/isdigit/isalnum/isspace.
std::string py_upper(std::string_view text);
std::string py_lower(std::string_view text);
std::string py_title(std::string_view text);
std::string py_capitalize(std::string_view text);
bool py_is_upper(std::string_view text);
bool py_is_lower(std::string_view text);
bool py_is_alpha(std::string_view text);
bool py_is_digit(std::string_view text);
bool py_is_alnum(std::string_view text);
bool py_is_space_str(std::string_view text);

// Python repr() of a str: quotes chosen as Python does, non-printable code points escaped.
std::string py_repr_string(std::string_view text);

// Python repr() of a float (shortest round-trip digits, exponent form when the decimal exponent
// is < -4 or > 16, "nan"/"inf").
std::string py_repr_float(double value);

}  // namespace lathe::tokenizer::jinja
