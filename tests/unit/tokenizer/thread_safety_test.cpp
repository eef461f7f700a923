// Concurrent encode/decode from many threads (as the server does) gives the single-threaded
// results: the word cache is shared and locked, match data is per call.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "test_support.h"
#include "tokenizer/streaming_detokenizer.h"

namespace lathe::tokenizer::test {
namespace {

void check_concurrent(const std::string& dir, const char* refs) {
  // A fresh instance: its word cache starts cold, so threads race to fill the same shards.
  const Tokenizer tokenizer = Tokenizer::load(dir);
  ReferenceFile file = read_references(refs);
  const size_t n = file.records.size();
  constexpr int kThreads = 8;
  constexpr int kRounds = 3;
  std::atomic<int> mismatches{0};
  std::atomic<int> encoded{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        // Every thread walks the corpus from a different start so different words collide.
        for (size_t k = 0; k < n; ++k) {
          const Reference& ref = file.records[(k * 7 + static_cast<size_t>(t) * 53) % n];
          std::vector<int32_t> ids = tokenizer.encode(*ref.text);
          if (ids != ref.ids) ++mismatches;
          if (tokenizer.decode(ids, false) != ref.decode) ++mismatches;
          if (k % 5 == 0) {
            StreamingDetokenizer stream(tokenizer, true);
            if (stream.push(ids) + stream.flush() != ref.decode_skip_special) ++mismatches;
          }
          ++encoded;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(encoded.load(), static_cast<int>(kThreads * kRounds * n));
}

TEST(TokenizerThreads, Qwen3ConcurrentEncodeAndDecodeAreIdentical) {
  check_concurrent(qwen3_dir(), "tokenizer/qwen3_refs.jsonl");
}

TEST(TokenizerThreads, TinyConcurrentEncodeAndDecodeAreIdentical) {
  check_concurrent(tiny_dir(), "tokenizer/tiny_refs.jsonl");
}

TEST(TokenizerThreads, CopiesShareStateAndStayValid) {
  std::vector<int32_t> want;
  Tokenizer copy = [&] {
    Tokenizer original = Tokenizer::load(tiny_dir());
    want = original.encode("The workshop lathe turns.");
    return original;  // the original goes out of scope; the copy keeps the state alive
  }();
  EXPECT_EQ(copy.encode("The workshop lathe turns."), want);
}

}  // namespace
}  // namespace lathe::tokenizer::test
