// write_safetensors: the format's reference layout (header padded with spaces to 8 bytes).
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include "core/error.h"
#include "io/json_util.h"
#include "io/safetensors.h"

namespace lathe::io {

void write_safetensors(const std::filesystem::path& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  const std::string file = path.string();
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (const TensorToWrite& tensor : tensors) {
    if (tensor.name == "__metadata__") fail("{}: '__metadata__' is reserved and cannot name a tensor", file);
    if (!seen.insert(tensor.name).second) fail("{}: tensor '{}' given twice", file, tensor.name);
    uint64_t numel = 1;
    for (int64_t extent : tensor.shape) {
      if (extent < 0) fail("{}: tensor '{}': negative dimension {}", file, tensor.name, extent);
      numel *= static_cast<uint64_t>(extent);
    }
    const uint64_t nbytes = numel * dtype_size(tensor.dtype);
    if (nbytes != tensor.bytes.size()) {
      fail("{}: tensor '{}': {} elements of {} need {} bytes, got {}", file, tensor.name, numel,
           dtype_name(tensor.dtype), nbytes, tensor.bytes.size());
    }
    header[tensor.name] = {{"dtype", std::string(dtype_name(tensor.dtype))},
                           {"shape", tensor.shape},
                           {"data_offsets", {offset, offset + nbytes}}};
    offset += nbytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  unsigned char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(static_cast<uint64_t>(text.size()) >> (8 * i));

  // Write beside the target and rename, so a reader never sees a half-written file.
  std::filesystem::path temp = path;
  temp += ".partial";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) fail("{}: cannot open for writing: {}", temp.string(), std::strerror(errno));
    out.write(reinterpret_cast<const char*>(length), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const TensorToWrite& tensor : tensors) {
      out.write(reinterpret_cast<const char*>(tensor.bytes.data()), static_cast<std::streamsize>(tensor.bytes.size()));
    }
    out.flush();
    if (!out) fail("{}: write failed", temp.string());
  }
  std::error_code error;
  std::filesystem::rename(temp, path, error);
  if (error) {
    const std::string reason = error.message();
    std::filesystem::remove(temp, error);
    fail("{}: cannot rename {} into place: {}", file, temp.string(), reason);
  }
}

}  // namespace lathe::io
