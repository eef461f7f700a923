#pragma once
// safetensors checkpoints (spec section 1): read-only mmapped files, single or sharded, and a
// writer. Every error from a malformed file is a lathe::Error naming the file and, where there
// is one, the tensor.
//
// File layout: bytes 0..7 header length N (u64 little-endian); bytes 8..8+N a JSON object
// {name: {"dtype", "shape", "data_offsets": [begin, end)}, "__metadata__"?: {str: str}}, maybe
// padded with trailing spaces; then the data buffer, which the tensors' offsets must tile
// exactly (no gap, no overlap, nothing after the last tensor).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace lathe::io {

// A whole file mapped read-only; unmapped on destruction. Not copyable.
class MappedFile {
 public:
  // Maps `path`; an empty file maps to size() == 0 and data() == nullptr.
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

// One tensor of a checkpoint: a view into a mapped file. `data` stays valid while the file (or
// the Checkpoint holding it) lives. The data is little-endian and row-major; its address is
// only as aligned as the file made it (files from write_safetensors align every tensor to 8).
struct TensorInfo {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const std::byte* data = nullptr;
  size_t nbytes = 0;
  std::filesystem::path file;

  int64_t numel() const;
  // "[4096, 1024]"
  std::string shape_string() const;
};

// One parsed and validated .safetensors file.
class SafetensorsFile {
 public:
  // Maps and validates the whole header; throws lathe::Error naming the file and tensor.
  static std::shared_ptr<const SafetensorsFile> open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_->path(); }
  // Tensors in data-offset order.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  // Null when absent.
  const TensorInfo* find(const std::string& name) const;
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  explicit SafetensorsFile(std::unique_ptr<MappedFile> file) : file_(std::move(file)) {}
  std::unique_ptr<MappedFile> file_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t> index_;  // name -> position in tensors_
  std::map<std::string, std::string> metadata_;
};

// A model directory's weights: `model.safetensors`, or `model.safetensors.index.json` plus the
// shards it names. Every tensor of every file is listed; the index is checked against the shards
// (missing shard file, tensor absent from its shard, one tensor in two shards are errors).
// Movable, not copyable; TensorInfo references stay valid across moves.
class Checkpoint {
 public:
  static Checkpoint open(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return dir_; }
  // Sorted tensor names.
  std::vector<std::string> names() const;
  size_t size() const { return tensors_.size(); }
  bool contains(const std::string& name) const { return tensors_.count(name) != 0; }
  // Null when absent.
  const TensorInfo* find(const std::string& name) const;
  // Throws lathe::Error naming the tensor and the directory when absent.
  const TensorInfo& tensor(const std::string& name) const;
  // The files (one, or the shards in name order).
  const std::vector<std::shared_ptr<const SafetensorsFile>>& files() const { return files_; }

 private:
  std::filesystem::path dir_;
  std::vector<std::shared_ptr<const SafetensorsFile>> files_;
  std::map<std::string, const TensorInfo*> tensors_;
};

// Converts a floating-point tensor (F32, F16, BF16, F64, F8_E4M3, F8_E5M2) to f32 values;
// other dtypes are an error naming the file and tensor.
std::vector<float> read_f32(const TensorInfo& tensor);

// A tensor to write: `bytes` must hold exactly prod(shape) * dtype_size(dtype) bytes.
struct TensorToWrite {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::span<const std::byte> bytes;
};

// Writes a valid safetensors file: 8-byte LE header length, the JSON header padded with spaces
// to a multiple of 8, then the tensors' data in the given order (so each starts 8-aligned when
// every tensor's size is a multiple of 8; offsets tile the buffer). Throws lathe::Error naming
// the path or tensor on bad input (duplicate or reserved name, byte count mismatch, negative
// dim) or an I/O failure.
void write_safetensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

// Parses a header's JSON text against a data buffer of `data_size` bytes starting at `data`
// (null allowed when data_size is 0); `source` names the file in errors. Returns the tensors in
// data-offset order and fills `metadata`. Exposed for tests; SafetensorsFile::open uses it.
std::vector<TensorInfo> parse_safetensors_header(std::string_view header, const std::byte* data, size_t data_size,
                                                 const std::filesystem::path& source,
                                                 std::map<std::string, std::string>& metadata);

}  // namespace lathe::io
