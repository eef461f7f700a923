#pragma once
// Unicode normalisation of the text between added tokens (utf8proc). Input must be valid UTF-8.
//
// HF tokenizers normalises with older Unicode tables than utf8proc's: a combining mark assigned
// later (e.g. U+0EBA, Unicode 12) is an ordinary starter for HF and is not reordered. For NFC and
// NFD, code points utf8proc knows but HF does not (unicode_classes.h, generated from HF) are
// swapped for private-use placeholders around the utf8proc call, so the result matches HF.
// NFKC/NFKD use utf8proc's tables unchanged.
//
// NFC alone (the Qwen case) runs utf8proc only on the spans around code points that are not NFC
// boundaries for HF (hf_nfc_unsafe(): marks, singletons, composition seconds) and copies the
// rest, so most text never reaches utf8proc.
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer_json.h"

namespace lathe::tokenizer {

class Normalizer {
 public:
  Normalizer() = default;
  explicit Normalizer(std::vector<NormalForm> forms) : forms_(std::move(forms)) {}

  bool empty() const { return forms_.empty(); }
  // Writes the normalised `text` to `out` (replacing its contents).
  void apply(std::string_view text, std::string& out) const;

 private:
  std::vector<NormalForm> forms_;
};

}  // namespace lathe::tokenizer
