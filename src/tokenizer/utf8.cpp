#include "tokenizer/utf8.h"

namespace lathe::tokenizer {
namespace {

// Length of the sequence `lead` starts (0 if it cannot start one) and the allowed range of the
// second byte (Unicode Table 3-7: E0, ED, F0, F4 narrow it to exclude overlongs, surrogates
// and code points above U+10FFFF).
struct LeadInfo {
  int length;
  uint8_t second_lo;
  uint8_t second_hi;
};

LeadInfo lead_info(uint8_t lead) {
  if (lead < 0x80) return {1, 0, 0};
  if (lead < 0xC2) return {0, 0, 0};
  if (lead < 0xE0) return {2, 0x80, 0xBF};
  if (lead == 0xE0) return {3, 0xA0, 0xBF};
  if (lead == 0xED) return {3, 0x80, 0x9F};
  if (lead < 0xF0) return {3, 0x80, 0xBF};
  if (lead == 0xF0) return {4, 0x90, 0xBF};
  if (lead < 0xF4) return {4, 0x80, 0xBF};
  if (lead == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

enum class Step { kComplete, kBroken, kIncomplete };

// Examines the sequence starting at data[0] (size >= 1). kComplete: `used` bytes form one code
// point. kBroken: the first `used` bytes are a maximal subpart (one U+FFFD). kIncomplete: all
// `size` bytes are a valid prefix that more bytes could complete.
Step examine(const uint8_t* data, size_t size, size_t& used) {
  LeadInfo info = lead_info(data[0]);
  if (info.length == 0) {
    used = 1;
    return Step::kBroken;
  }
  for (int i = 1; i < info.length; ++i) {
    if (static_cast<size_t>(i) >= size) {
      used = size;
      return Step::kIncomplete;
    }
    uint8_t lo = i == 1 ? info.second_lo : 0x80;
    uint8_t hi = i == 1 ? info.second_hi : 0xBF;
    if (data[i] < lo || data[i] > hi) {
      used = static_cast<size_t>(i);
      return Step::kBroken;
    }
  }
  used = static_cast<size_t>(info.length);
  return Step::kComplete;
}

// Decodes `bytes` into `out`; returns the number of trailing bytes left undecoded because they
// are an incomplete prefix (only when `hold_tail`; otherwise they become one U+FFFD).
size_t decode_into(std::string_view bytes, std::string& out, bool hold_tail) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t pos = 0;
  while (pos < bytes.size()) {
    // ASCII fast path.
    size_t run = pos;
    while (run < bytes.size() && data[run] < 0x80) ++run;
    if (run > pos) {
      out.append(bytes.data() + pos, run - pos);
      pos = run;
      continue;
    }
    size_t used = 0;
    Step step = examine(data + pos, bytes.size() - pos, used);
    if (step == Step::kComplete) {
      out.append(bytes.data() + pos, used);
    } else if (step == Step::kBroken) {
      out.append(kReplacementChar);
    } else {
      if (hold_tail) return bytes.size() - pos;
      out.append(kReplacementChar);
    }
    pos += used;
  }
  return 0;
}

}  // namespace

std::optional<size_t> find_invalid_utf8(std::string_view text) {
  const auto* data = reinterpret_cast<const uint8_t*>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    if (data[pos] < 0x80) {
      ++pos;
      continue;
    }
    size_t used = 0;
    if (examine(data + pos, text.size() - pos, used) != Step::kComplete) return pos;
    pos += used;
  }
  return std::nullopt;
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  decode_into(bytes, out, /*hold_tail=*/false);
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string Utf8StreamDecoder::push(std::string_view bytes) {
  std::string out;
  if (pending_.empty()) {
    size_t held = decode_into(bytes, out, /*hold_tail=*/true);
    pending_.assign(bytes.substr(bytes.size() - held));
    return out;
  }
  // The held tail is at most 3 bytes: decode it joined with the new bytes.
  std::string joined = pending_;
  joined.append(bytes);
  size_t held = decode_into(joined, out, /*hold_tail=*/true);
  pending_ = joined.substr(joined.size() - held);
  return out;
}

std::string Utf8StreamDecoder::flush() {
  std::string out;
  if (!pending_.empty()) out.assign(kReplacementChar);
  pending_.clear();
  return out;
}

}  // namespace lathe::tokenizer
