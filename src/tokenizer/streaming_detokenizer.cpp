#include "tokenizer/streaming_detokenizer.h"

namespace lathe::tokenizer {

std::string StreamingDetokenizer::push(int32_t id) {
  if (!tokenizer_.is_known(id)) return {};
  if (skip_special_ && tokenizer_.is_special(id)) return {};
  return utf8_.push(tokenizer_.token_bytes(id));
}

std::string StreamingDetokenizer::push(std::span<const int32_t> ids) {
  std::string out;
  for (int32_t id : ids) out += push(id);
  return out;
}

std::string StreamingDetokenizer::flush() { return utf8_.flush(); }

}  // namespace lathe::tokenizer
