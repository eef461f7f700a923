#include "tokenizer/bpe.h"

#include <algorithm>
#include <bit>

#include "core/error.h"
#include "tokenizer/byte_level.h"

namespace lathe::tokenizer {

BpeModel::BpeModel(const TokenizerSpec& spec, const std::unordered_map<std::string, int32_t>& token_to_id)
    : ignore_merges_(spec.ignore_merges), token_to_id_(&token_to_id), shards_(new Shard[kShards]) {
  const ByteLevelMap& bytes = ByteLevelMap::get();
  for (int b = 0; b < 256; ++b) {
    auto it = token_to_id.find(bytes.symbol(static_cast<uint8_t>(b)));
    if (it == token_to_id.end()) {
      fail("{}: model.vocab lacks the byte-level symbol '{}' of byte 0x{:02X}: not a byte-level BPE vocabulary",
           spec.source, bytes.symbol(static_cast<uint8_t>(b)), b);
    }
    byte_ids_[b] = it->second;
  }
  size_t slots = 16;
  while (slots < spec.merges.size() * 2) slots *= 2;
  merge_slots_.assign(slots, MergeSlot{});
  merge_shift_ = 64 - std::countr_zero(slots);
  for (size_t rank = 0; rank < spec.merges.size(); ++rank) {
    const auto& [left, right] = spec.merges[rank];
    auto l = token_to_id.find(left);
    auto r = token_to_id.find(right);
    auto m = token_to_id.find(left + right);
    if (l == token_to_id.end() || r == token_to_id.end() || m == token_to_id.end()) {
      const std::string& missing = l == token_to_id.end() ? left : r == token_to_id.end() ? right : left + right;
      fail("{}: model.merges[{}] ('{}' '{}'): token '{}' is not in model.vocab", spec.source, rank, left, right,
           missing);
    }
    insert_merge(pair_key(l->second, r->second), Merge{static_cast<int32_t>(rank), m->second});
  }
}

BpeModel::~BpeModel() = default;

void BpeModel::insert_merge(uint64_t key, Merge merge) {
  size_t mask = merge_slots_.size() - 1;
  for (size_t i = (key * 0x9E3779B97F4A7C15ULL) >> merge_shift_;; i = (i + 1) & mask) {
    if (merge_slots_[i].key == key) return;  // a repeated pair keeps its first (lowest) rank
    if (merge_slots_[i].key == kEmptyKey) {
      merge_slots_[i] = {key, merge};
      return;
    }
  }
}

const BpeModel::Merge* BpeModel::find_merge(int32_t left, int32_t right) const {
  uint64_t key = pair_key(left, right);
  size_t mask = merge_slots_.size() - 1;
  for (size_t i = (key * 0x9E3779B97F4A7C15ULL) >> merge_shift_;; i = (i + 1) & mask) {
    if (merge_slots_[i].key == key) return &merge_slots_[i].merge;
    if (merge_slots_[i].key == kEmptyKey) return nullptr;
  }
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& ids) const {
  if (word.empty()) return;
  if (word.size() == 1) {
    ids.push_back(byte_ids_[static_cast<uint8_t>(word[0])]);
    return;
  }
  if (word.size() > kMaxCachedWordBytes) {
    merge_word(word, ids);
    return;
  }
  size_t hash = std::hash<std::string_view>{}(word);
  Shard& shard = shards_[hash % kShards];
  {
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto it = shard.words.find(word);
    if (it != shard.words.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  size_t first = ids.size();
  merge_word(word, ids);
  std::vector<int32_t> result(ids.begin() + static_cast<std::ptrdiff_t>(first), ids.end());
  std::lock_guard<std::mutex> lock(shard.mutex);
  if (shard.words.size() >= kShardCapacity) shard.words.clear();
  shard.words.emplace(std::string(word), std::move(result));
}

void BpeModel::merge_word(std::string_view word, std::vector<int32_t>& ids) const {
  if (ignore_merges_) {
    // The whole word is a vocabulary token: use it without merging (HF's ignore_merges).
    auto it = token_to_id_->find(ByteLevelMap::get().encode(word));
    if (it != token_to_id_->end()) {
      ids.push_back(it->second);
      return;
    }
  }
  // Symbols form a doubly linked list over the initial byte positions; a merge folds the right
  // symbol into the left one. Candidate merges wait in a min-heap ordered by (rank, position);
  // an entry whose symbols changed since it was pushed is stale and skipped.
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
  };
  struct Candidate {
    int32_t rank;
    int32_t left;
    int32_t right;
    int32_t left_id;
    int32_t right_id;
    int32_t merged;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : left > other.left;
    }
  };
  const int32_t n = static_cast<int32_t>(word.size());
  // Per-thread scratch: no allocation per word once the buffers have grown.
  thread_local std::vector<Symbol> symbols;
  thread_local std::vector<Candidate> heap;
  symbols.resize(static_cast<size_t>(n));
  heap.clear();
  const auto later = [](const Candidate& a, const Candidate& b) { return a > b; };
  for (int32_t i = 0; i < n; ++i) {
    symbols[static_cast<size_t>(i)] = {byte_ids_[static_cast<uint8_t>(word[static_cast<size_t>(i)])], i - 1,
                                       i + 1 < n ? i + 1 : -1};
  }
  auto push_pair = [&](int32_t left) {
    if (left < 0) return;
    int32_t right = symbols[static_cast<size_t>(left)].next;
    if (right < 0) return;
    int32_t left_id = symbols[static_cast<size_t>(left)].id;
    int32_t right_id = symbols[static_cast<size_t>(right)].id;
    if (const Merge* merge = find_merge(left_id, right_id)) {
      heap.push_back({merge->rank, left, right, left_id, right_id, merge->merged});
      std::push_heap(heap.begin(), heap.end(), later);
    }
  };
  for (int32_t i = 0; i + 1 < n; ++i) push_pair(i);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    Candidate top = heap.back();
    heap.pop_back();
    Symbol& left = symbols[static_cast<size_t>(top.left)];
    if (left.id != top.left_id || left.next != top.right) continue;
    Symbol& right = symbols[static_cast<size_t>(top.right)];
    if (right.id != top.right_id) continue;
    left.id = top.merged;
    left.next = right.next;
    if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = top.left;
    right.id = -1;  // dead
    push_pair(left.prev);
    push_pair(top.left);
  }
  for (int32_t i = 0; i >= 0; i = symbols[static_cast<size_t>(i)].next) ids.push_back(symbols[static_cast<size_t>(i)].id);
}

}  // namespace lathe::tokenizer
