#include "tokenizer/normalizer.h"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

#include "core/error.h"

namespace lathe::tokenizer {
namespace {

bool is_ascii(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

int options_for(NormalForm form) {
  int options = UTF8PROC_STABLE;
  switch (form) {
    case NormalForm::kNfc: return options | UTF8PROC_COMPOSE;
    case NormalForm::kNfd: return options | UTF8PROC_DECOMPOSE;
    case NormalForm::kNfkc: return options | UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
    case NormalForm::kNfkd: return options | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
  }
  return options;
}

}  // namespace

void Normalizer::apply(std::string_view text, std::string& out) const {
  out.assign(text);
  if (forms_.empty() || is_ascii(text)) return;
  for (NormalForm form : forms_) {
    utf8proc_uint8_t* mapped = nullptr;
    // An explicit length (no UTF8PROC_NULLTERM) keeps embedded NUL characters.
    utf8proc_ssize_t length = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(out.data()),
                                           static_cast<utf8proc_ssize_t>(out.size()), &mapped,
                                           static_cast<utf8proc_option_t>(options_for(form)));
    std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(mapped, &std::free);
    if (length < 0) fail("tokenizer: Unicode normalisation failed: {}", utf8proc_errmsg(length));
    out.assign(reinterpret_cast<const char*>(mapped), static_cast<size_t>(length));
  }
}

}  // namespace lathe::tokenizer
