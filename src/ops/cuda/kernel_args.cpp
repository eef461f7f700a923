#include "ops/cuda/kernel_args.h"

#include "core/error.h"

namespace lathe::ops::cuda {

namespace kc = lathe::cuda;

kc::RowType row_type(DType dtype, const char* op, const char* what) {
  switch (dtype) {
    case DType::kBF16:
      return kc::RowType::kBf16;
    case DType::kF16:
      return kc::RowType::kF16;
    case DType::kF32:
      return kc::RowType::kF32;
    default:
      fail("cuda {}: {} has dtype {} (expected BF16, F16 or F32)", op, what, dtype_name(dtype));
  }
}

void require_bf16(const Act& a, const char* op, const char* what) {
  if (a.dtype != DType::kBF16) fail("cuda {}: {} must be BF16 (got {})", op, what, dtype_name(a.dtype));
}

kc::GemvScale gemv_scale(ScaleKind kind) {
  switch (kind) {
    case ScaleKind::kPerTensor:
      return kc::GemvScale::kPerTensor;
    case ScaleKind::kPerChannel:
      return kc::GemvScale::kPerChannel;
    case ScaleKind::kBlock128:
      return kc::GemvScale::kBlock128;
    case ScaleKind::kNone:
      break;
  }
  return kc::GemvScale::kNone;
}

}  // namespace lathe::ops::cuda
