#include "core/dtype.h"

#include <array>
#include <utility>

namespace lathe {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  size_t size;
};

constexpr std::array<DTypeInfo, 15> kTable = {{
    {DType::kBool, "BOOL", 1},
    {DType::kU8, "U8", 1},
    {DType::kI8, "I8", 1},
    {DType::kF8E5M2, "F8_E5M2", 1},
    {DType::kF8E4M3, "F8_E4M3", 1},
    {DType::kI16, "I16", 2},
    {DType::kU16, "U16", 2},
    {DType::kF16, "F16", 2},
    {DType::kBF16, "BF16", 2},
    {DType::kI32, "I32", 4},
    {DType::kU32, "U32", 4},
    {DType::kF32, "F32", 4},
    {DType::kI64, "I64", 8},
    {DType::kU64, "U64", 8},
    {DType::kF64, "F64", 8},
}};

const DTypeInfo& info(DType dtype) { return kTable[static_cast<size_t>(dtype)]; }

}  // namespace

size_t dtype_size(DType dtype) { return info(dtype).size; }

std::string_view dtype_name(DType dtype) { return info(dtype).name; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeInfo& entry : kTable) {
    if (entry.name == name) return entry.dtype;
  }
  return std::nullopt;
}

bool is_float(DType dtype) {
  switch (dtype) {
    case DType::kF8E5M2:
    case DType::kF8E4M3:
    case DType::kF16:
    case DType::kBF16:
    case DType::kF32:
    case DType::kF64:
      return true;
    default:
      return false;
  }
}

}  // namespace lathe
