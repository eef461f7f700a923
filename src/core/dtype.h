#pragma once
// Element types of safetensors checkpoints and of lathe's own buffers.
#include <cstddef>
#include <optional>
#include <string_view>

namespace lathe {

enum class DType {
  kBool,
  kU8,
  kI8,
  kF8E5M2,
  kF8E4M3,
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kI64,
  kU64,
  kF64,
};

// Bytes per element.
size_t dtype_size(DType dtype);
// The safetensors spelling ("F8_E4M3", "BF16", ...).
std::string_view dtype_name(DType dtype);
// Parses a safetensors spelling; nullopt for an unknown code.
std::optional<DType> parse_dtype(std::string_view name);
bool is_float(DType dtype);

}  // namespace lathe
