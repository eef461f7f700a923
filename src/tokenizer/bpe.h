#pragma once
// Byte-level BPE over one pre-token. A word starts as one symbol per byte (the byte's
// byte-level symbol id); then, repeatedly, the adjacent pair with the lowest merge rank is merged
// (ties: leftmost first), until no adjacent pair has a merge. Results are cached per word.
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/tokenizer_json.h"

namespace lathe::tokenizer {

class BpeModel {
 public:
  // Builds the model from the parsed spec; errors (merge of unknown tokens, missing byte
  // symbols) name spec.source. `token_to_id` is the vocabulary in byte-level form.
  BpeModel(const TokenizerSpec& spec, const std::unordered_map<std::string, int32_t>& token_to_id);
  ~BpeModel();

  // Appends the ids of `word` (raw bytes of one pre-token) to `ids`. Thread-safe.
  void encode_word(std::string_view word, std::vector<int32_t>& ids) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t merged;
  };
  // Open-addressing table of merges keyed by the (left id, right id) pair: one probe sequence
  // in a flat array, far fewer cache misses than a node-based map on the cold path.
  struct MergeSlot {
    uint64_t key = kEmptyKey;
    Merge merge{};
  };
  static constexpr uint64_t kEmptyKey = ~uint64_t{0};
  const Merge* find_merge(int32_t left, int32_t right) const;
  void insert_merge(uint64_t key, Merge merge);
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }
  void merge_word(std::string_view word, std::vector<int32_t>& ids) const;

  std::array<int32_t, 256> byte_ids_{};
  std::vector<MergeSlot> merge_slots_;  // size is a power of two, at most half full
  int merge_shift_ = 64;                 // 64 - log2(size): the multiplicative hash's shift
  bool ignore_merges_ = false;
  const std::unordered_map<std::string, int32_t>* token_to_id_ = nullptr;

  // The word cache: sharded so concurrent encoders rarely contend; a shard that reaches its
  // capacity is cleared (simple, bounded memory).
  static constexpr size_t kShards = 64;
  static constexpr size_t kShardCapacity = 4096;
  static constexpr size_t kMaxCachedWordBytes = 64;
  // Transparent hashing: lookups take a string_view without building a std::string.
  struct WordHash {
    using is_transparent = void;
    size_t operator()(std::string_view word) const { return std::hash<std::string_view>{}(word); }
  };
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<int32_t>, WordHash, std::equal_to<>> words;
  };
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace lathe::tokenizer
