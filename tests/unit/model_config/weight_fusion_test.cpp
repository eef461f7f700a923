// Which projections may be stored back to back as one weight (model/weight_upload.h fusable).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "model/weight_upload.h"

namespace lathe::model {
namespace {

const float kScales[64] = {};
const uint8_t kBytes[1] = {};

ops::WeightView weight(int64_t rows, ops::ScaleKind kind = ops::ScaleKind::kNone, DType dtype = DType::kF8E4M3) {
  ops::WeightView w;
  w.data = kBytes;
  w.dtype = dtype;
  w.rows = rows;
  w.cols = 256;
  w.scale_kind = kind;
  w.scale = kind == ops::ScaleKind::kNone ? nullptr : kScales;
  return w;
}

TEST(WeightFusion, SameFormatPartsFuse) {
  const ops::WeightView q = weight(512, ops::ScaleKind::kBlock128), k = weight(128, ops::ScaleKind::kBlock128);
  EXPECT_TRUE(fusable({&q, &k, &k}));
  const ops::WeightView a = weight(100, ops::ScaleKind::kNone, DType::kBF16), b = weight(30, ops::ScaleKind::kNone, DType::kBF16);
  EXPECT_TRUE(fusable({&a, &b}));
  // Per-tensor and per-channel FP8 fuse as per-channel.
  const ops::WeightView t = weight(100, ops::ScaleKind::kPerTensor), c = weight(30, ops::ScaleKind::kPerChannel);
  EXPECT_TRUE(fusable({&t, &c}));
}

TEST(WeightFusion, MismatchedPartsStaySeparate) {
  const ops::WeightView block = weight(128, ops::ScaleKind::kBlock128);
  const ops::WeightView edge = weight(192, ops::ScaleKind::kBlock128);  // a partial 128-row block
  EXPECT_FALSE(fusable({&block, &edge}));
  const ops::WeightView channel = weight(128, ops::ScaleKind::kPerChannel);
  EXPECT_FALSE(fusable({&block, &channel}));
  const ops::WeightView bf16 = weight(128, ops::ScaleKind::kNone, DType::kBF16);
  EXPECT_FALSE(fusable({&bf16, &block}));
  ops::WeightView narrow = block;
  narrow.cols = 128;
  EXPECT_FALSE(fusable({&block, &narrow}));
  ops::WeightView biased = bf16;
  const float bias[128] = {};
  biased.bias = bias;
  EXPECT_FALSE(fusable({&bf16, &biased}));
  EXPECT_TRUE(fusable({&biased, &biased}));
  EXPECT_FALSE(fusable({}));
}

}  // namespace
}  // namespace lathe::model
