#pragma once
// Unicode normalisation of the text between added tokens (utf8proc). Input must be valid UTF-8.
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
  // Writes the normalised `text` to `out` (replacing its contents). ASCII text is invariant under
  // every normal form and is copied without calling utf8proc.
  void apply(std::string_view text, std::string& out) const;

 private:
  std::vector<NormalForm> forms_;
};

}  // namespace lathe::tokenizer
