#pragma once
// Ownership of paged KV-cache blocks (pure host code; ARCHITECTURE rule 1).
//
// The cache has num_blocks blocks of block_size token slots per layer (ops/kv_cache.h). Block 0
// is reserved as the scratch block: padded rows of a captured decode graph write there, and
// unused block-table entries point there, so it is never handed to a sequence. Every other block
// is owned by at most one sequence at a time; a sequence's block table lists its blocks in
// position order, so position p lives in slot table[p / block_size] * block_size + p % block_size.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace lathe::engine {

using SeqId = int64_t;

class BlockManager {
 public:
  static constexpr int32_t kScratchBlock = 0;

  BlockManager(int32_t num_blocks, int32_t block_size);

  int32_t block_size() const { return block_size_; }
  int32_t num_blocks() const { return num_blocks_; }
  // Blocks that can ever be owned (all but the scratch block).
  int32_t num_usable() const { return num_blocks_ - 1; }
  int32_t num_free() const { return static_cast<int32_t>(free_.size()); }
  int32_t num_used() const { return num_usable() - num_free(); }
  int32_t blocks_for_tokens(int64_t num_tokens) const;

  // Grows `seq`'s table to hold `num_tokens` tokens. All or nothing: returns false and changes
  // nothing when too few blocks are free.
  bool ensure_capacity(SeqId seq, int64_t num_tokens);
  // Whether ensure_capacity(seq, num_tokens) would succeed now.
  bool can_ensure(SeqId seq, int64_t num_tokens) const;
  // Returns all of `seq`'s blocks to the free list (no-op for an unknown sequence).
  void release(SeqId seq);

  bool has(SeqId seq) const { return tables_.contains(seq); }
  const std::vector<int32_t>& block_table(SeqId seq) const;
  // Slot of token `position` of `seq`; its block must already be allocated.
  int32_t slot(SeqId seq, int64_t position) const;
  // Tokens `seq` can hold without growing.
  int64_t capacity(SeqId seq) const;
  size_t num_sequences() const { return tables_.size(); }

  // Consistency check for tests: every usable block is free xor owned by exactly one sequence.
  bool check_invariants() const;

 private:
  int32_t num_blocks_;
  int32_t block_size_;
  std::vector<int32_t> free_;  // LIFO free list
  std::unordered_map<SeqId, std::vector<int32_t>> tables_;
};

}  // namespace lathe::engine
