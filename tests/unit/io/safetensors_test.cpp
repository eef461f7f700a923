// safetensors writer -> reader round trips, sharded checkpoints, and lookups.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/numeric.h"
#include "io/safetensors.h"
#include "test_util.h"

namespace lathe::io {
namespace {

using test::error_of;
using test::expect_contains;
using test::TempDir;

constexpr DType kAllDtypes[] = {DType::kBool, DType::kU8,  DType::kI8,   DType::kF8E5M2, DType::kF8E4M3,
                                DType::kI16,  DType::kU16, DType::kF16,  DType::kBF16,   DType::kI32,
                                DType::kU32,  DType::kF32, DType::kI64,  DType::kU64,    DType::kF64};

std::vector<std::byte> pattern(size_t count, int seed) {
  std::vector<std::byte> bytes(count);
  for (size_t i = 0; i < count; ++i) bytes[i] = static_cast<std::byte>((i * 31 + static_cast<size_t>(seed) * 7 + 1) & 0xff);
  return bytes;
}

uint64_t header_length(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char bytes[8] = {};
  in.read(reinterpret_cast<char*>(bytes), 8);
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[i];
  return value;
}

TEST(SafetensorsRoundTrip, EveryDtypeZeroSizeAndScalar) {
  TempDir dir;
  std::vector<std::vector<std::byte>> buffers;
  std::vector<TensorToWrite> tensors;
  int seed = 0;
  for (DType dtype : kAllDtypes) {
    buffers.push_back(pattern(2 * 3 * dtype_size(dtype), seed++));
    tensors.push_back({"t." + std::string(dtype_name(dtype)), dtype, {2, 3}, buffers.back()});
  }
  buffers.push_back(pattern(4, 99));
  tensors.push_back({"scalar", DType::kF32, {}, buffers.back()});
  tensors.push_back({"empty", DType::kBF16, {0, 4}, {}});
  const auto path = dir / "x.safetensors";
  write_safetensors(path, tensors, {{"format", "pt"}, {"note", "round trip"}});
  EXPECT_EQ(header_length(path) % 8, 0u);

  auto file = SafetensorsFile::open(path);
  EXPECT_EQ(file->metadata().at("format"), "pt");
  EXPECT_EQ(file->metadata().at("note"), "round trip");
  ASSERT_EQ(file->tensors().size(), tensors.size());
  for (const TensorToWrite& expected : tensors) {
    const TensorInfo* got = file->find(expected.name);
    ASSERT_NE(got, nullptr) << expected.name;
    EXPECT_EQ(got->name, expected.name);
    EXPECT_EQ(got->dtype, expected.dtype) << expected.name;
    EXPECT_EQ(got->shape, expected.shape) << expected.name;
    EXPECT_EQ(got->nbytes, expected.bytes.size()) << expected.name;
    EXPECT_EQ(got->file, path);
    if (!expected.bytes.empty()) {
      EXPECT_EQ(std::memcmp(got->data, expected.bytes.data(), got->nbytes), 0) << expected.name;
    }
  }
  EXPECT_EQ(file->find("scalar")->numel(), 1);
  EXPECT_EQ(file->find("empty")->numel(), 0);
  EXPECT_EQ(file->find("t.F32")->shape_string(), "[2, 3]");
  EXPECT_EQ(file->find("missing"), nullptr);
}

TEST(SafetensorsRoundTrip, ReadF32ConvertsFloatTypes) {
  TempDir dir;
  const std::vector<float> values = {1.0f, -2.5f, 0.15625f, 448.0f};
  std::vector<uint16_t> as_bf16, as_f16;
  std::vector<uint8_t> as_e4m3;
  for (float v : values) {
    as_bf16.push_back(to_bf16(v).bits);
    as_f16.push_back(to_f16(v).bits);
    as_e4m3.push_back(float_to_fp8_e4m3(v));
  }
  const std::vector<double> as_f64(values.begin(), values.end());
  write_safetensors(dir / "f.safetensors",
                    {{"f32", DType::kF32, {4}, std::as_bytes(std::span(values))},
                     {"bf16", DType::kBF16, {4}, std::as_bytes(std::span(as_bf16))},
                     {"f16", DType::kF16, {2, 2}, std::as_bytes(std::span(as_f16))},
                     {"f64", DType::kF64, {4}, std::as_bytes(std::span(as_f64))},
                     {"e4m3", DType::kF8E4M3, {4}, std::as_bytes(std::span(as_e4m3))},
                     {"ints", DType::kI32, {1}, std::as_bytes(std::span(as_bf16).first(2))}});
  auto file = SafetensorsFile::open(dir / "f.safetensors");
  for (const char* name : {"f32", "bf16", "f16", "f64", "e4m3"}) {
    EXPECT_EQ(read_f32(*file->find(name)), values) << name;  // all four values are exact in every type
  }
  expect_contains(error_of([&] { read_f32(*file->find("ints")); }), {"f.safetensors", "'ints'", "I32"});
}

TEST(Checkpoint, SingleFileDirectory) {
  TempDir dir;
  const auto a = pattern(16, 1);
  write_safetensors(dir / "model.safetensors", {{"a", DType::kF32, {4}, a}});
  const Checkpoint checkpoint = Checkpoint::open(dir.path());
  EXPECT_EQ(checkpoint.names(), std::vector<std::string>{"a"});
  EXPECT_TRUE(checkpoint.contains("a"));
  EXPECT_EQ(checkpoint.tensor("a").file, dir / "model.safetensors");
  EXPECT_EQ(std::memcmp(checkpoint.tensor("a").data, a.data(), 16), 0);
  // A bare file path works too.
  EXPECT_EQ(Checkpoint::open(dir / "model.safetensors").size(), 1u);
}

TEST(Checkpoint, MissingTensorNamesTensorAndDirectory) {
  TempDir dir;
  write_safetensors(dir / "model.safetensors", {});
  const Checkpoint checkpoint = Checkpoint::open(dir.path());
  EXPECT_EQ(checkpoint.find("model.norm.weight"), nullptr);
  expect_contains(error_of([&] { checkpoint.tensor("model.norm.weight"); }),
                  {"model.norm.weight", dir.path().string()});
}

TEST(Checkpoint, EmptyDirectoryIsAnError) {
  TempDir dir;
  expect_contains(error_of([&] { Checkpoint::open(dir.path()); }),
                  {dir.path().string(), "model.safetensors", "model.safetensors.index.json"});
  expect_contains(error_of([&] { Checkpoint::open(dir / "nope"); }), {"nope", "not found"});
}

// Two shards plus an index, as HF's sharded save writes them.
void write_two_shards(const TempDir& dir, const std::vector<std::byte>& a, const std::vector<std::byte>& b,
                      const std::vector<std::byte>& c) {
  write_safetensors(dir / "model-00001-of-00002.safetensors",
                    {{"model.a", DType::kBF16, {2, 4}, a}, {"model.b", DType::kF32, {4}, b}});
  write_safetensors(dir / "model-00002-of-00002.safetensors", {{"lm_head.weight", DType::kU8, {3, 2}, c}});
}

TEST(Checkpoint, ShardedIndex) {
  TempDir dir;
  const auto a = pattern(16, 1), b = pattern(16, 2), c = pattern(6, 3);
  write_two_shards(dir, a, b, c);
  test::write_file(dir / "model.safetensors.index.json", R"({
    "metadata": {"total_size": 38},
    "weight_map": {"model.a": "model-00001-of-00002.safetensors",
                   "model.b": "model-00001-of-00002.safetensors",
                   "lm_head.weight": "model-00002-of-00002.safetensors"}})");
  Checkpoint checkpoint = Checkpoint::open(dir.path());
  EXPECT_EQ(checkpoint.names(), (std::vector<std::string>{"lm_head.weight", "model.a", "model.b"}));
  EXPECT_EQ(checkpoint.files().size(), 2u);
  const TensorInfo& head = checkpoint.tensor("lm_head.weight");
  EXPECT_EQ(head.file, dir / "model-00002-of-00002.safetensors");
  EXPECT_EQ(head.dtype, DType::kU8);
  EXPECT_EQ(head.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(std::memcmp(head.data, c.data(), 6), 0);
  EXPECT_EQ(checkpoint.tensor("model.a").file, dir / "model-00001-of-00002.safetensors");
  EXPECT_EQ(std::memcmp(checkpoint.tensor("model.b").data, b.data(), 16), 0);

  // References stay valid when the Checkpoint moves.
  const TensorInfo* before = &checkpoint.tensor("model.a");
  Checkpoint moved = std::move(checkpoint);
  EXPECT_EQ(&moved.tensor("model.a"), before);
}

TEST(CheckpointIndexErrors, MissingShardFile) {
  TempDir dir;
  write_two_shards(dir, pattern(16, 1), pattern(16, 2), pattern(6, 3));
  test::write_file(dir / "model.safetensors.index.json",
                   R"({"metadata": {}, "weight_map": {"model.a": "model-00001-of-00002.safetensors",
                       "model.z": "model-00003-of-00002.safetensors"}})");
  expect_contains(error_of([&] { Checkpoint::open(dir.path()); }),
                  {"model.safetensors.index.json", "model-00003-of-00002.safetensors", "model.z", "not found"});
}

TEST(CheckpointIndexErrors, TensorAbsentFromItsShard) {
  TempDir dir;
  write_two_shards(dir, pattern(16, 1), pattern(16, 2), pattern(6, 3));
  test::write_file(dir / "model.safetensors.index.json",
                   R"({"weight_map": {"model.a": "model-00002-of-00002.safetensors"}})");
  expect_contains(error_of([&] { Checkpoint::open(dir.path()); }),
                  {"model.safetensors.index.json", "'model.a'", "model-00002-of-00002.safetensors", "does not contain"});
}

TEST(CheckpointIndexErrors, SameTensorInTwoShards) {
  TempDir dir;
  const auto a = pattern(16, 1);
  write_safetensors(dir / "s1.safetensors", {{"model.a", DType::kF32, {4}, a}});
  write_safetensors(dir / "s2.safetensors", {{"model.a", DType::kF32, {4}, a}, {"model.b", DType::kF32, {4}, a}});
  test::write_file(dir / "model.safetensors.index.json",
                   R"({"weight_map": {"model.a": "s1.safetensors", "model.b": "s2.safetensors"}})");
  expect_contains(error_of([&] { Checkpoint::open(dir.path()); }),
                  {"'model.a'", "two shards", "s1.safetensors", "s2.safetensors"});
}

TEST(CheckpointIndexErrors, MalformedIndex) {
  TempDir dir;
  const auto index = dir / "model.safetensors.index.json";
  test::write_file(index, "{\"weight_map\": ");
  expect_contains(error_of([&] { Checkpoint::open(dir.path()); }), {index.string(), "invalid JSON"});
  test::write_file(index, R"({"metadata": {}})");
  expect_contains(error_of([&] { Checkpoint::open(dir.path()); }), {index.string(), "weight_map"});
  test::write_file(index, R"({"weight_map": {"model.a": 3}})");
  expect_contains(error_of([&] { Checkpoint::open(dir.path()); }), {index.string(), "'model.a'", "integer"});
  test::write_file(index, R"({"weight_map": {"model.a": "../outside.safetensors"}})");
  expect_contains(error_of([&] { Checkpoint::open(dir.path()); }),
                  {index.string(), "'model.a'", "../outside.safetensors"});
}

TEST(SafetensorsWriter, RejectsBadInput) {
  TempDir dir;
  const auto path = dir / "w.safetensors";
  const auto six = pattern(6, 0);
  expect_contains(error_of([&] { write_safetensors(path, {{"x", DType::kF32, {2}, six}}); }),
                  {path.string(), "'x'", "need 8 bytes, got 6"});
  expect_contains(
      error_of([&] { write_safetensors(path, {{"x", DType::kU8, {6}, six}, {"x", DType::kU8, {6}, six}}); }),
      {path.string(), "'x'", "twice"});
  expect_contains(error_of([&] { write_safetensors(path, {{"__metadata__", DType::kU8, {6}, six}}); }),
                  {path.string(), "reserved"});
  expect_contains(error_of([&] { write_safetensors(path, {{"x", DType::kU8, {-6}, six}}); }),
                  {path.string(), "'x'", "negative"});
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace lathe::io
