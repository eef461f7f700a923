// Checkpoint: a model directory's safetensors files (single or sharded via the index).
#include <map>

#include "core/error.h"
#include "io/json_util.h"
#include "io/safetensors.h"

namespace lathe::io {
namespace {

constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";

// A shard name from the index must be a plain relative path inside the directory.
void check_shard_name(const std::string& shard, const std::string& tensor, const std::string& index) {
  const std::filesystem::path path(shard);
  bool escapes = shard.empty() || path.is_absolute();
  for (const auto& part : path) escapes = escapes || part == "..";
  if (escapes) fail("{}: tensor '{}': shard file name '{}' is not a file inside the model directory", index, tensor, shard);
}

}  // namespace

Checkpoint Checkpoint::open(const std::filesystem::path& dir) {
  Checkpoint checkpoint;
  checkpoint.dir_ = dir;
  std::error_code error;
  if (std::filesystem::is_regular_file(dir, error)) {
    // A bare .safetensors path is accepted as a one-file checkpoint (tools and tests use it).
    checkpoint.files_.push_back(SafetensorsFile::open(dir));
  } else if (!std::filesystem::is_directory(dir, error)) {
    fail("{}: checkpoint directory not found", dir.string());
  } else if (std::filesystem::exists(dir / kSingleFile, error)) {
    checkpoint.files_.push_back(SafetensorsFile::open(dir / kSingleFile));
  } else if (std::filesystem::exists(dir / kIndexFile, error)) {
    const std::filesystem::path index_path = dir / kIndexFile;
    const std::string index = index_path.string();
    const Json root = read_json_file(index_path);
    if (!root.is_object()) fail("{}: must be a JSON object, got {}", index, json_type_name(root));
    json_object(root, "metadata", index);  // optional; only its type is checked
    const Json* weight_map = json_object(root, "weight_map", index);
    if (weight_map == nullptr) fail("{}: missing field 'weight_map'", index);

    // Open every shard named in the index once, in name order.
    std::map<std::string, std::shared_ptr<const SafetensorsFile>> shards;
    for (const auto& [tensor, shard_value] : weight_map->items()) {
      if (!shard_value.is_string()) {
        fail("{}: weight_map entry for tensor '{}' must be a file name string, got {}", index, tensor,
             json_type_name(shard_value));
      }
      const std::string shard = shard_value.get<std::string>();
      check_shard_name(shard, tensor, index);
      if (shards.count(shard) != 0) continue;
      if (!std::filesystem::is_regular_file(dir / shard, error)) {
        fail("{}: shard file '{}' (listed for tensor '{}') not found in {}", index, shard, tensor, dir.string());
      }
      shards[shard] = SafetensorsFile::open(dir / shard);
    }
    for (const auto& entry : shards) checkpoint.files_.push_back(entry.second);

    // Every tensor the index lists must be in the shard it names.
    for (const auto& [tensor, shard_value] : weight_map->items()) {
      const std::string shard = shard_value.get<std::string>();
      if (shards.at(shard)->find(tensor) == nullptr) {
        fail("{}: tensor '{}' is listed in shard '{}' but that file does not contain it", index, tensor, shard);
      }
    }
  } else {
    fail("{}: no {} or {} in the checkpoint directory", dir.string(), kSingleFile, kIndexFile);
  }

  // One name space over all files; a tensor in two shards is ambiguous.
  for (const auto& file : checkpoint.files_) {
    for (const TensorInfo& tensor : file->tensors()) {
      auto [it, inserted] = checkpoint.tensors_.emplace(tensor.name, &tensor);
      if (!inserted) {
        fail("{}: tensor '{}' appears in two shards: {} and {}", dir.string(), tensor.name, it->second->file.string(),
             tensor.file.string());
      }
    }
  }
  return checkpoint;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  out.reserve(tensors_.size());
  for (const auto& entry : tensors_) out.push_back(entry.first);
  return out;
}

const TensorInfo* Checkpoint::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second;
}

const TensorInfo& Checkpoint::tensor(const std::string& name) const {
  const TensorInfo* found = find(name);
  if (found == nullptr) fail("tensor '{}' not found in checkpoint {}", name, dir_.string());
  return *found;
}

}  // namespace lathe::io
