#pragma once
// The Split pre-tokenizer (behaviour Isolated): every regex match is one piece and so is every
// stretch of text between matches. Patterns are written for Oniguruma (what HF tokenizers runs)
// and executed with PCRE2 (PCRE2_UTF | PCRE2_UCP, JIT-compiled when available).
//
// translate_pattern() removes the differences that matter for tokenizer patterns:
//   `\s`  Oniguruma matches the Unicode White_Space property, PCRE2 with UCP matches \p{Z}, \h
//         and \v, which adds U+180E (MONGOLIAN VOWEL SEPARATOR). `\s` is spelled as the explicit
//         White_Space set and `\S` as its complement.
//   `\p{X}`, `\pX`, `\d` for a general category X: HF's Oniguruma has Unicode 16.0 tables,
//         Debian 12's PCRE2 10.42 Unicode 14.0; the code points added since are appended as
//         ranges (unicode_classes.h), so e.g. a Unicode 16 letter is \p{L} for both.
// Refused with an error: `\S`, `\P{X}` or `\D` inside a character class (not representable),
// `\Q...\E`. `\w`/`\b` pass through with a one-time warning (their Unicode definitions differ
// slightly). Everything else is passed through unchanged.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/unicode_classes.h"

namespace lathe::tokenizer {

struct TranslatedPattern {
  std::string pcre2;
  std::vector<CodePointRange> delta_ranges;  // code points appended to categories (sorted, merged)
};

// Oniguruma pattern -> PCRE2 pattern (see above). `where` names the field in errors. With
// category_deltas false, categories are left as PCRE2 has them (the fast variant used for text
// that holds none of delta_ranges).
TranslatedPattern translate_pattern(std::string_view pattern, const std::string& where, bool category_deltas = true);

class SplitPreTokenizer {
 public:
  // Compiles `pattern` (Oniguruma syntax, translated); a pattern PCRE2 rejects throws
  // lathe::Error naming `where` and the offset.
  SplitPreTokenizer(std::string_view pattern, const std::string& where);
  ~SplitPreTokenizer();
  SplitPreTokenizer(SplitPreTokenizer&&) noexcept;
  SplitPreTokenizer& operator=(SplitPreTokenizer&&) noexcept;

  // Appends the pieces of `text` (valid UTF-8, not checked again) to `pieces`, in order; the
  // pieces are views into `text` and tile it exactly (no empty piece). Thread-safe.
  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

  bool jit() const { return jit_; }

 private:
  struct Code;
  std::unique_ptr<Code> code_;
  bool jit_ = false;
  std::string where_;
};

}  // namespace lathe::tokenizer
