#include "engine/block_manager.h"

#include <algorithm>

#include "core/error.h"

namespace lathe::engine {

BlockManager::BlockManager(int32_t num_blocks, int32_t block_size) : num_blocks_(num_blocks), block_size_(block_size) {
  if (block_size <= 0) fail("KV block size must be positive (got {})", block_size);
  if (num_blocks < 2) fail("the KV cache needs at least 2 blocks (got {}): too little memory for the cache", num_blocks);
  free_.reserve(static_cast<size_t>(num_blocks - 1));
  // Hand out low block ids first: pushed in reverse so pop_back yields 1, 2, 3, ...
  for (int32_t block = num_blocks - 1; block >= 1; --block) free_.push_back(block);
}

int32_t BlockManager::blocks_for_tokens(int64_t num_tokens) const {
  return static_cast<int32_t>((num_tokens + block_size_ - 1) / block_size_);
}

bool BlockManager::can_ensure(SeqId seq, int64_t num_tokens) const {
  const auto it = tables_.find(seq);
  const int64_t have = it == tables_.end() ? 0 : static_cast<int64_t>(it->second.size());
  const int64_t need = blocks_for_tokens(num_tokens) - have;
  return need <= num_free();
}

bool BlockManager::ensure_capacity(SeqId seq, int64_t num_tokens) {
  if (!can_ensure(seq, num_tokens)) return false;
  std::vector<int32_t>& table = tables_[seq];
  const int32_t want = blocks_for_tokens(num_tokens);
  while (static_cast<int32_t>(table.size()) < want) {
    table.push_back(free_.back());
    free_.pop_back();
  }
  return true;
}

void BlockManager::release(SeqId seq) {
  const auto it = tables_.find(seq);
  if (it == tables_.end()) return;
  // Return in reverse so the most recently taken blocks are reused first.
  for (auto block = it->second.rbegin(); block != it->second.rend(); ++block) free_.push_back(*block);
  tables_.erase(it);
}

const std::vector<int32_t>& BlockManager::block_table(SeqId seq) const {
  static const std::vector<int32_t> kEmpty;
  const auto it = tables_.find(seq);
  return it == tables_.end() ? kEmpty : it->second;
}

int32_t BlockManager::slot(SeqId seq, int64_t position) const {
  const std::vector<int32_t>& table = block_table(seq);
  const int64_t index = position / block_size_;
  if (position < 0 || index >= static_cast<int64_t>(table.size())) {
    fail("internal: position {} of sequence {} has no KV block", position, seq);
  }
  return table[static_cast<size_t>(index)] * block_size_ + static_cast<int32_t>(position % block_size_);
}

int64_t BlockManager::capacity(SeqId seq) const {
  return static_cast<int64_t>(block_table(seq).size()) * block_size_;
}

bool BlockManager::check_invariants() const {
  std::vector<int> owners(static_cast<size_t>(num_blocks_), 0);
  for (int32_t block : free_) {
    if (block <= kScratchBlock || block >= num_blocks_) return false;
    owners[static_cast<size_t>(block)]++;
  }
  for (const auto& [seq, table] : tables_) {
    for (int32_t block : table) {
      if (block <= kScratchBlock || block >= num_blocks_) return false;
      owners[static_cast<size_t>(block)]++;
    }
  }
  return std::all_of(owners.begin() + 1, owners.end(), [](int count) { return count == 1; });
}

}  // namespace lathe::engine
