#pragma once
// A deterministic stand-in for "model + paged KV cache + sampler" used by the engine tests.
//
// The fake cache records, per slot, the token and position written there. Every forward step
// first writes each row's (token, position) at slot_mapping[row]; then, for each logits row, it
// reads the sequence's whole context back through its block table (context_len positions) and
// checks each slot holds the expected position. The next token is a hash of that context (and,
// when temperature > 0, of the sampling seed and step), so any wrong slot mapping, block table,
// context length, lost KV or block shared between sequences changes the output, and the output
// of a request is a pure function of its own tokens: reference_generate() computes it alone.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/stop.h"
#include "ops/batch.h"
#include "ops/sampling.h"

namespace lathe::engine::testing {

inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The fake model's "forward + sample" for one sequence whose cached context is `context`.
inline int32_t fake_next_token(std::span<const int32_t> context, const ops::SamplingParams& sampling,
                               int32_t vocab) {
  uint64_t h = 0x1234567ull + context.size();
  for (int32_t token : context) h = mix64(h ^ static_cast<uint64_t>(token) * 0x9E3779B97F4A7C15ull);
  if (sampling.temperature > 0.0f)
    h = mix64(h ^ mix64(sampling.seed) ^ (sampling.step * 0xD1B54A32D192ED03ull));
  return static_cast<int32_t>(h % static_cast<uint64_t>(vocab));
}

struct ReferenceResult {
  std::vector<int32_t> output;
  FinishReason finish = FinishReason::kLength;
};

// The request run alone, token by token, with the same stop rules.
inline ReferenceResult reference_generate(std::vector<int32_t> tokens, const TokenStopRules& rules,
                                          ops::SamplingParams sampling, int32_t vocab) {
  ReferenceResult result;
  const int32_t prompt_len = static_cast<int32_t>(tokens.size());
  for (;;) {
    sampling.step = result.output.size();
    const int32_t token = fake_next_token(tokens, sampling, vocab);
    tokens.push_back(token);
    result.output.push_back(token);
    const auto stop = check_token_stop(rules, prompt_len, static_cast<int32_t>(result.output.size()), token);
    if (stop) {
      result.finish = *stop;
      return result;
    }
  }
}

class FakeModel {
 public:
  FakeModel(int32_t num_blocks, int32_t block_size, int32_t vocab)
      : block_size_(block_size), vocab_(vocab), cache_(static_cast<size_t>(num_blocks) * block_size) {}

  int32_t vocab() const { return vocab_; }
  int64_t steps() const { return steps_; }

  // Throws std::logic_error when the batch reads a slot that does not hold what it should.
  std::vector<int32_t> execute(const ops::ForwardBatch& batch,
                               std::span<const ops::SamplingParams> sampling) {
    ++steps_;
    if (sampling.size() != batch.logits_rows.size())
      throw std::logic_error("one sampling entry per logits row");
    for (int32_t row = 0; row < batch.num_tokens(); ++row) {
      cache_.at(static_cast<size_t>(batch.slot_mapping[static_cast<size_t>(row)])) =
          Entry{batch.token_ids[static_cast<size_t>(row)], batch.positions[static_cast<size_t>(row)]};
    }
    std::vector<int32_t> sampled;
    size_t next_row = 0;
    for (int32_t s = 0; s < batch.num_seqs(); ++s) {
      const int32_t last_row = batch.query_start[static_cast<size_t>(s) + 1] - 1;
      if (next_row >= batch.logits_rows.size() || batch.logits_rows[next_row] != last_row) continue;
      std::vector<int32_t> context;
      const int32_t context_len = batch.context_lens[static_cast<size_t>(s)];
      for (int32_t p = 0; p < context_len; ++p) {
        const int32_t block =
            batch.block_tables.at(static_cast<size_t>(s) * batch.max_blocks_per_seq + p / block_size_);
        const Entry& entry = cache_.at(static_cast<size_t>(block) * block_size_ + p % block_size_);
        if (entry.position != p) {
          throw std::logic_error("KV slot of position " + std::to_string(p) + " holds position " +
                                 std::to_string(entry.position));
        }
        context.push_back(entry.token);
      }
      sampled.push_back(fake_next_token(context, sampling[next_row], vocab_));
      ++next_row;
    }
    if (next_row != batch.logits_rows.size())
      throw std::logic_error("a logits row is not the last row of a sequence");
    return sampled;
  }

 private:
  struct Entry {
    int32_t token = -1;
    int32_t position = -1;
  };
  int32_t block_size_;
  int32_t vocab_;
  std::vector<Entry> cache_;
  int64_t steps_ = 0;
};

}  // namespace lathe::engine::testing
