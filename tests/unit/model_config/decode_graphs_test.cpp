// The host side of the decode graphs (model/decode_graphs.h): bucket choice, the input layout,
// which steps fit, and padding. The replay itself is tested on the GPU (gpu_golden_qwen3).
#include "model/decode_graphs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/error.h"

namespace lathe::model {
namespace {

TEST(DecodeGraphBuckets, DenseAtSmallBatchesAndEndingAtTheWidest) {
  EXPECT_EQ(decode_graph_buckets(1, {}), (std::vector<int32_t>{1}));
  EXPECT_EQ(decode_graph_buckets(5, {}), (std::vector<int32_t>{1, 2, 4, 5}));
  EXPECT_EQ(decode_graph_buckets(64, {}), (std::vector<int32_t>{1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64}));
  const std::vector<int32_t> wide = decode_graph_buckets(256, {});
  EXPECT_EQ(wide, (std::vector<int32_t>{1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256}));
  EXPECT_TRUE(decode_graph_buckets(0, {}).empty());
}

TEST(DecodeGraphBuckets, EveryBoundaryIsABucketSoNoBucketStraddlesIt) {
  for (const int32_t boundary : {3, 12, 20, 32}) {
    const std::vector<int32_t> b = decode_graph_buckets(64, std::vector<int32_t>{boundary, 500});
    EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
    EXPECT_NE(std::find(b.begin(), b.end(), boundary), b.end()) << boundary;
    EXPECT_EQ(std::find(b.begin(), b.end(), 500), b.end());  // beyond the widest step: ignored
    // Every row count m maps to the smallest bucket >= m, which is <= boundary iff m is.
    for (int32_t m = 1; m <= 64; ++m) {
      const int32_t bucket = *std::lower_bound(b.begin(), b.end(), m);
      EXPECT_EQ(m <= boundary, bucket <= boundary) << "m " << m << " boundary " << boundary;
    }
  }
}

// Two decode sequences: lengths 5 and 20 with block tables of width 2.
ops::ForwardBatch two_decode_rows() {
  ops::ForwardBatch b;
  b.phase = ops::Phase::kDecode;
  b.num_decode_rows = 2;
  b.token_ids = {11, 12};
  b.positions = {4, 19};
  b.slot_mapping = {3 * 16 + 4, 6 * 16 + 3};
  b.query_start = {0, 1, 2};
  b.context_lens = {5, 20};
  b.max_blocks_per_seq = 2;
  b.block_tables = {3, 0, 5, 6};
  b.logits_rows = {0, 1};
  return b;
}

TEST(DecodeGraphInputs, LayoutPutsTheTablesLastSoAStepUploadsOnePrefix) {
  const DecodeInputLayout layout(8, 4);
  EXPECT_EQ(layout.positions, 8);
  EXPECT_EQ(layout.query_start, 24);
  EXPECT_EQ(layout.context_lens, 33);  // query_start holds rows + 1 entries
  EXPECT_EQ(layout.block_tables, 49);
  EXPECT_EQ(layout.prefix_elements(2), 49 + 8);
  EXPECT_EQ(layout.total_elements(), 49 + 32);
}

TEST(DecodeGraphInputs, OnlyPureDecodeStepsThatFitTheLayoutTakeAGraph) {
  const DecodeInputLayout layout(2, 2);
  EXPECT_TRUE(fits_decode_graph(two_decode_rows(), layout));
  ops::ForwardBatch prefill = two_decode_rows();
  prefill.phase = ops::Phase::kPrefill;
  EXPECT_FALSE(fits_decode_graph(prefill, layout));
  EXPECT_FALSE(fits_decode_graph(two_decode_rows(), DecodeInputLayout(1, 2)));  // wider than the widest bucket
  EXPECT_FALSE(fits_decode_graph(two_decode_rows(), DecodeInputLayout(2, 1)));  // tables wider than the layout
  ops::ForwardBatch swapped = two_decode_rows();
  swapped.logits_rows = {1, 0};
  EXPECT_FALSE(fits_decode_graph(swapped, layout));
}

TEST(DecodeGraphInputs, PaddingRowsDecodeIntoTheScratchBlockAndRealRowsKeepTheirArrays) {
  const DecodeInputLayout layout(8, 3);
  std::vector<int32_t> host;
  pack_padded_decode(two_decode_rows(), 4, layout, host);
  ASSERT_EQ(static_cast<int64_t>(host.size()), layout.prefix_elements(4));
  const auto at = [&](int64_t base, int64_t i) { return host[static_cast<size_t>(base + i)]; };
  const std::vector<int32_t> tokens = {11, 12, 0, 0}, positions = {4, 19, 0, 0}, slots = {52, 99, 0, 0},
                             lens = {5, 20, 1, 1};
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(at(layout.token_ids, r), tokens[static_cast<size_t>(r)]);
    EXPECT_EQ(at(layout.positions, r), positions[static_cast<size_t>(r)]);
    EXPECT_EQ(at(layout.slot_mapping, r), slots[static_cast<size_t>(r)]);
    EXPECT_EQ(at(layout.context_lens, r), lens[static_cast<size_t>(r)]);
    EXPECT_EQ(at(layout.logits_rows, r), r);
    EXPECT_EQ(at(layout.query_start, r), r);
  }
  EXPECT_EQ(at(layout.query_start, 4), 4);
  // Tables re-strided from width 2 to 3; padding rows read block 0 only.
  const std::vector<int32_t> tables = {3, 0, 0, 5, 6, 0, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i < tables.size(); ++i) EXPECT_EQ(at(layout.block_tables, static_cast<int64_t>(i)), tables[i]) << i;
  EXPECT_THROW(pack_padded_decode(two_decode_rows(), 1, layout, host), Error);
  EXPECT_THROW(pack_padded_decode(two_decode_rows(), 9, layout, host), Error);
}

}  // namespace
}  // namespace lathe::model
