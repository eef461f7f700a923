// safetensors single-file reader: header validation (spec section 1) and tensor views.
#include "io/safetensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "core/numeric.h"
#include "io/json_util.h"

namespace lathe::io {
namespace {

// The reference implementation refuses headers above 100 MB; so do we (a guard against
// reading a corrupt length as a huge allocation).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr std::string_view kMetadataKey = "__metadata__";

uint64_t read_le_u64(const std::byte* bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<uint64_t>(bytes[i]);
  return value;
}

// A non-negative integer that fits in int64 / size_t, else nullopt.
std::optional<uint64_t> as_count(const Json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer() && value.get<int64_t>() >= 0) return static_cast<uint64_t>(value.get<int64_t>());
  return std::nullopt;
}

void parse_metadata(const Json& value, const std::string& file, std::map<std::string, std::string>& metadata) {
  if (!value.is_object()) fail("{}: {} must be an object of strings, got {}", file, kMetadataKey, json_type_name(value));
  for (const auto& [key, entry] : value.items()) {
    if (!entry.is_string()) {
      fail("{}: {} entry '{}' must be a string, got {}", file, kMetadataKey, key, json_type_name(entry));
    }
    metadata[key] = entry.get<std::string>();
  }
}

struct Span {
  uint64_t begin = 0;
  uint64_t end = 0;
};

// Validates one tensor entry's fields; fills everything except `data`. Returns the offsets.
Span parse_entry(const std::string& name, const Json& entry, const std::string& file, TensorInfo& tensor) {
  if (!entry.is_object()) fail("{}: tensor '{}': entry must be an object, got {}", file, name, json_type_name(entry));
  tensor.name = name;

  auto dtype_it = entry.find("dtype");
  if (dtype_it == entry.end()) fail("{}: tensor '{}': missing field 'dtype'", file, name);
  if (!dtype_it->is_string()) {
    fail("{}: tensor '{}': field 'dtype' must be a string, got {}", file, name, json_type_name(*dtype_it));
  }
  const std::string dtype_text = dtype_it->get<std::string>();
  const std::optional<DType> dtype = parse_dtype(dtype_text);
  if (!dtype) fail("{}: tensor '{}': unknown dtype '{}'", file, name, dtype_text);
  tensor.dtype = *dtype;

  auto shape_it = entry.find("shape");
  if (shape_it == entry.end()) fail("{}: tensor '{}': missing field 'shape'", file, name);
  if (!shape_it->is_array()) {
    fail("{}: tensor '{}': field 'shape' must be an array, got {}", file, name, json_type_name(*shape_it));
  }
  // numel and the byte count must fit in 64 bits; overflow is reported rather than wrapped.
  uint64_t numel = 1;
  for (const Json& dim : *shape_it) {
    if (!dim.is_number_integer()) {
      fail("{}: tensor '{}': shape entries must be integers, got {} {}", file, name, json_type_name(dim),
           dim.dump(-1, ' ', true));
    }
    if (dim.is_number_unsigned() ? dim.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                                 : dim.get<int64_t>() < 0) {
      fail("{}: tensor '{}': shape {} has a negative or out-of-range dimension", file, name, shape_it->dump());
    }
    const int64_t extent = dim.get<int64_t>();
    tensor.shape.push_back(extent);
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(extent), &numel)) {
      fail("{}: tensor '{}': shape {} has too many elements", file, name, shape_it->dump());
    }
  }

  auto offsets_it = entry.find("data_offsets");
  if (offsets_it == entry.end()) fail("{}: tensor '{}': missing field 'data_offsets'", file, name);
  if (!offsets_it->is_array() || offsets_it->size() != 2) {
    fail("{}: tensor '{}': field 'data_offsets' must be an array [begin, end], got {}", file, name,
         offsets_it->dump(-1, ' ', true));
  }
  const std::optional<uint64_t> begin = as_count((*offsets_it)[0]);
  const std::optional<uint64_t> end = as_count((*offsets_it)[1]);
  if (!begin || !end) {
    fail("{}: tensor '{}': data_offsets {} must be non-negative integers", file, name, offsets_it->dump(-1, ' ', true));
  }
  if (*end < *begin) fail("{}: tensor '{}': data_offsets [{}, {}] end before begin", file, name, *begin, *end);
  uint64_t expected = 0;
  if (__builtin_mul_overflow(numel, static_cast<uint64_t>(dtype_size(tensor.dtype)), &expected)) {
    fail("{}: tensor '{}': shape {} has too many bytes", file, name, shape_it->dump());
  }
  if (expected != *end - *begin) {
    fail("{}: tensor '{}': data_offsets [{}, {}] hold {} bytes but {} {} needs {}", file, name, *begin, *end,
         *end - *begin, dtype_text, shape_it->dump(), expected);
  }
  tensor.nbytes = static_cast<size_t>(*end - *begin);
  return {*begin, *end};
}

}  // namespace

int64_t TensorInfo::numel() const {
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  return count;
}

std::string TensorInfo::shape_string() const { return fmt::format("[{}]", fmt::join(shape, ", ")); }

std::vector<TensorInfo> parse_safetensors_header(std::string_view header, const std::byte* data, size_t data_size,
                                                 const std::filesystem::path& source,
                                                 std::map<std::string, std::string>& metadata) {
  const std::string file = source.string();
  Json root;
  try {
    root = Json::parse(header.begin(), header.end());
  } catch (const Json::exception& error) {
    fail("{}: safetensors header is not valid JSON: {}", file, error.what());
  }
  if (!root.is_object()) fail("{}: safetensors header must be a JSON object, got {}", file, json_type_name(root));

  std::vector<TensorInfo> tensors;
  std::vector<Span> spans;
  for (const auto& [name, entry] : root.items()) {
    if (name == kMetadataKey) {
      parse_metadata(entry, file, metadata);
      continue;
    }
    TensorInfo tensor;
    tensor.file = source;
    const Span span = parse_entry(name, entry, file, tensor);
    if (span.end > data_size) {
      fail("{}: tensor '{}': data_offsets [{}, {}] run past the end of the file (data buffer is {} bytes)", file,
           name, span.begin, span.end, data_size);
    }
    tensor.data = data + span.begin;
    tensors.push_back(std::move(tensor));
    spans.push_back(span);
  }

  // The offsets must tile [0, data_size) exactly: sort by (begin, end), then every tensor must
  // start where the previous one ended.
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return spans[a].begin != spans[b].begin ? spans[a].begin < spans[b].begin : spans[a].end < spans[b].end;
  });
  uint64_t cursor = 0;
  const std::string* previous = nullptr;
  for (size_t index : order) {
    const Span& span = spans[index];
    const std::string& name = tensors[index].name;
    if (span.begin < cursor) {
      fail("{}: tensor '{}': data_offsets [{}, {}] overlap tensor '{}' (which ends at {})", file, name, span.begin,
           span.end, *previous, cursor);
    }
    if (span.begin > cursor) {
      if (previous == nullptr) {
        fail("{}: tensor '{}': data_offsets [{}, {}] leave a gap: the data buffer starts at 0", file, name,
             span.begin, span.end);
      }
      fail("{}: tensor '{}': data_offsets [{}, {}] leave a gap after tensor '{}' (which ends at {})", file, name,
           span.begin, span.end, *previous, cursor);
    }
    cursor = span.end;
    previous = &name;
  }
  if (cursor != data_size) {
    if (previous == nullptr) fail("{}: header lists no tensors but {} data bytes follow it", file, data_size);
    fail("{}: {} bytes of data after the last tensor '{}' (ends at {}, data buffer is {} bytes)", file,
         data_size - cursor, *previous, cursor, data_size);
  }

  std::vector<TensorInfo> sorted;
  sorted.reserve(tensors.size());
  for (size_t index : order) sorted.push_back(std::move(tensors[index]));
  return sorted;
}

std::shared_ptr<const SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path) {
  auto mapped = std::make_unique<MappedFile>(path);
  const std::string file = path.string();
  const size_t size = mapped->size();
  if (size < 8) fail("{}: file is {} bytes, shorter than the 8-byte safetensors header length", file, size);
  const uint64_t header_size = read_le_u64(mapped->data());
  if (header_size > kMaxHeaderBytes) {
    fail("{}: header length {} exceeds the 100 MB limit (not a safetensors file?)", file, header_size);
  }
  if (header_size > size - 8) {
    fail("{}: header length {} runs past the end of the file ({} bytes)", file, header_size, size);
  }
  const std::byte* header_begin = mapped->data() + 8;
  const std::string_view header(reinterpret_cast<const char*>(header_begin), static_cast<size_t>(header_size));
  const size_t data_size = size - 8 - static_cast<size_t>(header_size);

  std::shared_ptr<SafetensorsFile> result(new SafetensorsFile(std::move(mapped)));
  result->tensors_ = parse_safetensors_header(header, header_begin + header_size, data_size, path, result->metadata_);
  for (size_t i = 0; i < result->tensors_.size(); ++i) result->index_[result->tensors_[i].name] = i;
  return result;
}

const TensorInfo* SafetensorsFile::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

std::vector<float> read_f32(const TensorInfo& tensor) {
  const size_t count = static_cast<size_t>(tensor.numel());
  std::vector<float> out(count);
  const std::byte* src = tensor.data;
  switch (tensor.dtype) {
    case DType::kF32:
      if (count > 0) std::memcpy(out.data(), src, count * 4);
      break;
    case DType::kF64:
      for (size_t i = 0; i < count; ++i) {
        double value;
        std::memcpy(&value, src + 8 * i, 8);
        out[i] = static_cast<float>(value);
      }
      break;
    case DType::kBF16:
      for (size_t i = 0; i < count; ++i) {
        bf16 value;
        std::memcpy(&value.bits, src + 2 * i, 2);
        out[i] = to_float(value);
      }
      break;
    case DType::kF16:
      for (size_t i = 0; i < count; ++i) {
        f16 value;
        std::memcpy(&value.bits, src + 2 * i, 2);
        out[i] = to_float(value);
      }
      break;
    case DType::kF8E4M3:
      for (size_t i = 0; i < count; ++i) out[i] = fp8_e4m3_to_float(static_cast<uint8_t>(src[i]));
      break;
    case DType::kF8E5M2:
      for (size_t i = 0; i < count; ++i) out[i] = fp8_e5m2_to_float(static_cast<uint8_t>(src[i]));
      break;
    default:
      fail("{}: tensor '{}' has dtype {}, not a floating-point type", tensor.file.string(), tensor.name,
           dtype_name(tensor.dtype));
  }
  return out;
}

}  // namespace lathe::io
