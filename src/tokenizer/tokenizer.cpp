#include "tokenizer/tokenizer.h"

#include <fstream>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/utf8.h"

namespace lathe::tokenizer {
namespace {

// Ids index a dense table; this bound keeps a hostile file from asking for gigabytes.
constexpr int32_t kMaxTokenId = 1 << 24;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open {}", path.string());
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) fail("cannot read {}", path.string());
  return buffer.str();
}

}  // namespace

struct Tokenizer::Impl {
  struct TokenInfo {
    std::string text;   // as in tokenizer.json (byte-level form for vocabulary tokens)
    std::string bytes;  // what decode() emits for it
    bool known = false;
    bool added = false;
    bool special = false;
  };

  explicit Impl(TokenizerSpec parsed);

  void encode_segment(std::string_view segment, std::vector<int32_t>& ids, std::string& normalized,
                      std::vector<AddedTokenMatch>& matches, std::vector<std::string_view>& pieces,
                      std::vector<std::string_view>& scratch) const;
  void encode_plain(std::string_view text, std::vector<int32_t>& ids, std::vector<std::string_view>& pieces,
                    std::vector<std::string_view>& scratch) const;

  TokenizerSpec spec;
  std::unordered_map<std::string, int32_t> vocab_to_id;
  std::unordered_map<std::string, int32_t> added_to_id;
  std::vector<TokenInfo> tokens;  // by id
  Normalizer normalizer;
  std::vector<SplitPreTokenizer> splits;
  AddedTokenMatcher raw_matcher;         // added tokens with normalized=false
  AddedTokenMatcher normalized_matcher;  // added tokens with normalized=true
  std::unique_ptr<BpeModel> bpe;
};

Tokenizer::Impl::Impl(TokenizerSpec parsed) : spec(std::move(parsed)), normalizer(spec.normalizers) {
  const ByteLevelMap& byte_map = ByteLevelMap::get();
  int32_t max_id = -1;
  vocab_to_id.reserve(spec.vocab.size());
  for (const auto& [text, id] : spec.vocab) {
    if (id >= kMaxTokenId) fail("{}: model.vocab['{}']: id {} is too large", spec.source, text, id);
    vocab_to_id.emplace(text, id);
    max_id = std::max(max_id, id);
  }
  for (const AddedTokenSpec& added : spec.added_tokens) {
    if (added.id >= kMaxTokenId) fail("{}: added token '{}': id {} is too large", spec.source, added.content, added.id);
    max_id = std::max(max_id, added.id);
  }
  tokens.resize(static_cast<size_t>(max_id + 1));
  for (const auto& [text, id] : spec.vocab) {
    TokenInfo& info = tokens[static_cast<size_t>(id)];
    if (info.known) fail("{}: model.vocab: id {} is used by both '{}' and '{}'", spec.source, id, info.text, text);
    info.known = true;
    info.text = text;
  }
  for (const AddedTokenSpec& added : spec.added_tokens) {
    TokenInfo& info = tokens[static_cast<size_t>(added.id)];
    if (info.added) {
      fail("{}: added_tokens: id {} is used by both '{}' and '{}'", spec.source, added.id, info.text, added.content);
    }
    // An added token overrides a vocabulary entry with the same id (HF id_to_token does too).
    info = {added.content, {}, true, true, added.special};
    added_to_id[added.content] = added.id;
  }
  for (TokenInfo& info : tokens) {
    if (!info.known) continue;
    std::optional<std::string> bytes = byte_map.decode(info.text);
    info.bytes = bytes ? std::move(*bytes) : info.text;
  }

  for (size_t i = 0; i < spec.split_regexes.size(); ++i) {
    splits.emplace_back(spec.split_regexes[i], fmt::format("{}: pre_tokenizer Split #{} pattern", spec.source, i));
  }
  bpe = std::make_unique<BpeModel>(spec, vocab_to_id);

  std::vector<AddedTokenSpec> raw, normal;
  std::vector<std::string> raw_contents, normal_contents;
  for (const AddedTokenSpec& added : spec.added_tokens) {
    if (added.normalized) {
      std::string content;
      normalizer.apply(added.content, content);
      normal.push_back(added);
      normal_contents.push_back(std::move(content));
    } else {
      raw.push_back(added);
      raw_contents.push_back(added.content);
    }
  }
  raw_matcher = AddedTokenMatcher(raw, raw_contents);
  normalized_matcher = AddedTokenMatcher(normal, normal_contents);
}

void Tokenizer::Impl::encode_plain(std::string_view text, std::vector<int32_t>& ids,
                                   std::vector<std::string_view>& pieces,
                                   std::vector<std::string_view>& scratch) const {
  if (text.empty()) return;
  pieces.clear();
  if (splits.empty()) {
    pieces.push_back(text);
  } else {
    splits[0].split(text, pieces);
    for (size_t s = 1; s < splits.size(); ++s) {
      scratch.clear();
      for (std::string_view piece : pieces) splits[s].split(piece, scratch);
      pieces.swap(scratch);
    }
  }
  for (std::string_view piece : pieces) bpe->encode_word(piece, ids);
}

void Tokenizer::Impl::encode_segment(std::string_view segment, std::vector<int32_t>& ids, std::string& normalized,
                                     std::vector<AddedTokenMatch>& matches, std::vector<std::string_view>& pieces,
                                     std::vector<std::string_view>& scratch) const {
  if (segment.empty()) return;
  std::string_view text = segment;
  if (!normalizer.empty()) {
    normalizer.apply(segment, normalized);
    text = normalized;
  }
  if (normalized_matcher.empty()) {
    encode_plain(text, ids, pieces, scratch);
    return;
  }
  matches.clear();
  normalized_matcher.find(text, matches);
  size_t pos = 0;
  for (const AddedTokenMatch& match : matches) {
    encode_plain(text.substr(pos, match.begin - pos), ids, pieces, scratch);
    ids.push_back(match.id);
    pos = match.end;
  }
  encode_plain(text.substr(pos), ids, pieces, scratch);
}

Tokenizer Tokenizer::load(const std::filesystem::path& path) {
  std::filesystem::path file = path;
  if (std::filesystem::is_directory(path)) {
    file = path / "tokenizer.json";
    if (!std::filesystem::exists(file)) fail("no tokenizer.json in {}", path.string());
  } else if (!std::filesystem::exists(path)) {
    fail("tokenizer not found: {}", path.string());
  }
  return from_json(read_file(file), file.string());
}

Tokenizer Tokenizer::from_json(std::string_view json_text, const std::string& source) {
  return Tokenizer(std::make_shared<const Impl>(parse_tokenizer_json(json_text, source)));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  if (std::optional<size_t> bad = find_invalid_utf8(text)) {
    fail("tokenizer: input text is not valid UTF-8 (byte {} of {})", *bad, text.size());
  }
  const Impl& impl = *impl_;
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  std::string normalized;
  std::vector<AddedTokenMatch> raw_matches, matches;
  std::vector<std::string_view> pieces, scratch;
  impl.raw_matcher.find(text, raw_matches);
  size_t pos = 0;
  for (const AddedTokenMatch& match : raw_matches) {
    impl.encode_segment(text.substr(pos, match.begin - pos), ids, normalized, matches, pieces, scratch);
    ids.push_back(match.id);
    pos = match.end;
  }
  impl.encode_segment(text.substr(pos), ids, normalized, matches, pieces, scratch);
  return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special) const {
  std::string bytes;
  for (int32_t id : ids) {
    if (!is_known(id)) continue;
    const Impl::TokenInfo& info = impl_->tokens[static_cast<size_t>(id)];
    if (skip_special && info.special) continue;
    bytes += info.bytes;
  }
  return utf8_lossy(bytes);
}

int32_t Tokenizer::vocab_size() const { return static_cast<int32_t>(impl_->tokens.size()); }

std::optional<int32_t> Tokenizer::token_id(std::string_view token) const {
  auto added = impl_->added_to_id.find(std::string(token));
  if (added != impl_->added_to_id.end()) return added->second;
  auto it = impl_->vocab_to_id.find(std::string(token));
  if (it != impl_->vocab_to_id.end()) return it->second;
  return std::nullopt;
}

std::string Tokenizer::token_text(int32_t id) const {
  if (!is_known(id)) fail("tokenizer: unknown token id {} (vocab size {})", id, vocab_size());
  return impl_->tokens[static_cast<size_t>(id)].text;
}

std::string_view Tokenizer::token_bytes(int32_t id) const {
  if (!is_known(id)) return {};
  return impl_->tokens[static_cast<size_t>(id)].bytes;
}

bool Tokenizer::is_known(int32_t id) const {
  return id >= 0 && id < vocab_size() && impl_->tokens[static_cast<size_t>(id)].known;
}

bool Tokenizer::is_added(int32_t id) const { return is_known(id) && impl_->tokens[static_cast<size_t>(id)].added; }

bool Tokenizer::is_special(int32_t id) const {
  return is_known(id) && impl_->tokens[static_cast<size_t>(id)].special;
}

const std::vector<AddedTokenSpec>& Tokenizer::added_tokens() const { return impl_->spec.added_tokens; }

const std::string& Tokenizer::source() const { return impl_->spec.source; }

}  // namespace lathe::tokenizer
