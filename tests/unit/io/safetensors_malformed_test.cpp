// Every malformed safetensors file is refused with a message naming the file and (where there
// is one) the tensor. Files are built byte by byte so each defect is exactly the one intended.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "io/safetensors.h"
#include "test_util.h"

namespace lathe::io {
namespace {

using test::error_of;
using test::expect_contains;
using test::TempDir;

std::string le64(uint64_t value) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>((value >> (8 * i)) & 0xff);
  return bytes;
}

// 8-byte length (the header's, unless overridden) + header + `data_bytes` zero bytes.
std::string raw_file(const std::string& header, size_t data_bytes, std::optional<uint64_t> length = std::nullopt) {
  return le64(length.value_or(header.size())) + header + std::string(data_bytes, '\0');
}

class Malformed : public ::testing::Test {
 protected:
  // Writes the bytes and returns the message of the error opening them gives.
  std::string open_error(const std::string& bytes) {
    test::write_file(path_, bytes);
    return error_of([&] { SafetensorsFile::open(path_); });
  }
  TempDir dir_;
  std::filesystem::path path_ = dir_ / "bad.safetensors";
  std::string file_ = path_.string();
};

TEST_F(Malformed, ShorterThanEightBytes) {
  expect_contains(open_error(std::string("\x05\x00\x00", 3)), {file_, "3 bytes", "shorter than the 8-byte"});
  expect_contains(open_error(""), {file_, "0 bytes"});
}

TEST_F(Malformed, HeaderLengthBeyondFile) {
  expect_contains(open_error(raw_file("{}", 0, 1000)), {file_, "header length 1000", "past the end"});
}

TEST_F(Malformed, HeaderOver100MB) {
  expect_contains(open_error(raw_file("{}", 0, 100'000'001)), {file_, "100000001", "100 MB"});
}

TEST_F(Malformed, BadJson) {
  expect_contains(open_error(raw_file("{\"a\": {\"dtype\": ", 0)), {file_, "not valid JSON"});
  expect_contains(open_error(raw_file("{\"a\": 1} trailing", 0)), {file_, "not valid JSON"});
}

TEST_F(Malformed, NotAnObject) {
  expect_contains(open_error(raw_file("[1, 2]", 0)), {file_, "must be a JSON object", "array"});
  expect_contains(open_error(raw_file(R"({"w": [1]})", 0)), {file_, "'w'", "entry must be an object"});
}

TEST_F(Malformed, MissingFields) {
  expect_contains(open_error(raw_file(R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", 4)),
                  {file_, "'w'", "missing field 'dtype'"});
  expect_contains(open_error(raw_file(R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})", 4)),
                  {file_, "'w'", "missing field 'shape'"});
  expect_contains(open_error(raw_file(R"({"w": {"dtype": "F32", "shape": [1]}})", 4)),
                  {file_, "'w'", "missing field 'data_offsets'"});
}

TEST_F(Malformed, MistypedFields) {
  expect_contains(open_error(raw_file(R"({"w": {"dtype": 7, "shape": [1], "data_offsets": [0, 4]}})", 4)),
                  {file_, "'w'", "'dtype' must be a string"});
  expect_contains(open_error(raw_file(R"({"w": {"dtype": "F32", "shape": "1", "data_offsets": [0, 4]}})", 4)),
                  {file_, "'w'", "'shape' must be an array"});
  expect_contains(open_error(raw_file(R"({"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})", 4)),
                  {file_, "'w'", "shape entries must be integers"});
  expect_contains(open_error(raw_file(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [4]}})", 4)),
                  {file_, "'w'", "'data_offsets' must be an array [begin, end]"});
  expect_contains(open_error(raw_file(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": 4}})", 4)),
                  {file_, "'w'", "'data_offsets' must be an array [begin, end]"});
  expect_contains(open_error(raw_file(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": ["0", 4]}})", 4)),
                  {file_, "'w'", "non-negative integers"});
  expect_contains(open_error(raw_file(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}})", 4)),
                  {file_, "'w'", "non-negative integers"});
}

TEST_F(Malformed, UnknownDtype) {
  expect_contains(open_error(raw_file(R"({"w": {"dtype": "F4", "shape": [2], "data_offsets": [0, 1]}})", 1)),
                  {file_, "'w'", "unknown dtype 'F4'"});
}

TEST_F(Malformed, NegativeDimension) {
  expect_contains(open_error(raw_file(R"({"w": {"dtype": "U8", "shape": [-1, 2], "data_offsets": [0, 0]}})", 0)),
                  {file_, "'w'", "negative"});
}

TEST_F(Malformed, ByteCountDisagreesWithShape) {
  expect_contains(open_error(raw_file(R"({"w": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, 10]}})", 10)),
                  {file_, "'w'", "hold 10 bytes", "needs 12"});
  expect_contains(open_error(raw_file(R"({"w": {"dtype": "U8", "shape": [2], "data_offsets": [4, 2]}})", 4)),
                  {file_, "'w'", "end before begin"});
}

TEST_F(Malformed, OverlappingOffsets) {
  const std::string header = R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                 "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})";
  expect_contains(open_error(raw_file(header, 12)), {file_, "'b'", "overlap", "'a'"});
}

TEST_F(Malformed, GapBetweenTensors) {
  const std::string header = R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                 "b": {"dtype": "F32", "shape": [2], "data_offsets": [12, 20]}})";
  expect_contains(open_error(raw_file(header, 20)), {file_, "'b'", "gap", "'a'"});
}

TEST_F(Malformed, GapAtStart) {
  expect_contains(open_error(raw_file(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})", 12)),
                  {file_, "'a'", "gap", "starts at 0"});
}

TEST_F(Malformed, BytesAfterLastTensor) {
  expect_contains(open_error(raw_file(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 12)),
                  {file_, "'a'", "4 bytes of data after the last tensor"});
  expect_contains(open_error(raw_file("{}", 3)), {file_, "no tensors", "3 data bytes"});
}

TEST_F(Malformed, DataPastEndOfFile) {
  expect_contains(open_error(raw_file(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 4)),
                  {file_, "'a'", "past the end of the file"});
}

TEST_F(Malformed, MetadataMustBeStringMap) {
  expect_contains(open_error(raw_file(R"({"__metadata__": {"format": 1}})", 0)),
                  {file_, "__metadata__", "'format'", "must be a string"});
  expect_contains(open_error(raw_file(R"({"__metadata__": ["pt"]})", 0)), {file_, "__metadata__", "object"});
}

TEST_F(Malformed, ValidEdgeCasesAreAccepted) {
  // Metadata, trailing-space padding, an empty tensor, zero-size tensors sharing an offset.
  const std::string header =
      R"({"__metadata__": {"format": "pt"}, "z": {"dtype": "F16", "shape": [0], "data_offsets": [4, 4]},)"
      R"( "y": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},)"
      R"( "x": {"dtype": "I64", "shape": [3, 0], "data_offsets": [4, 4]}})"
      "        ";
  test::write_file(path_, raw_file(header, 4));
  auto file = SafetensorsFile::open(path_);
  EXPECT_EQ(file->metadata().at("format"), "pt");
  ASSERT_EQ(file->tensors().size(), 3u);
  EXPECT_EQ(file->tensors()[0].name, "y");  // data-offset order
  EXPECT_EQ(file->find("x")->nbytes, 0u);
  // A header with no tensors and no data is an empty (valid) file.
  test::write_file(path_, raw_file("{}", 0));
  EXPECT_TRUE(SafetensorsFile::open(path_)->tensors().empty());
}

TEST_F(Malformed, ErrorsReachCheckpointOpenWithTheShardName) {
  TempDir dir;
  test::write_file(dir / "model.safetensors", raw_file(R"({"w": {"dtype": "Q4", "shape": [1], "data_offsets": [0, 1]}})", 1));
  expect_contains(error_of([&] { Checkpoint::open(dir.path()); }),
                  {(dir / "model.safetensors").string(), "'w'", "unknown dtype 'Q4'"});
}

}  // namespace
}  // namespace lathe::io
