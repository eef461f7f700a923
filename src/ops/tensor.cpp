#include "ops/tensor.h"

#include "core/dtype.h"

namespace lathe::ops {

Act Act::slice_rows(int64_t first, int64_t count) const {
  Act view = *this;
  view.data = static_cast<char*>(data) + first * stride * static_cast<int64_t>(dtype_size(dtype));
  view.rows = count;
  return view;
}

Act Act::slice_cols(int64_t first, int64_t count) const {
  Act view = *this;
  view.data = static_cast<char*>(data) + first * static_cast<int64_t>(dtype_size(dtype));
  view.cols = count;
  return view;
}

const char* scale_kind_name(ScaleKind kind) {
  switch (kind) {
    case ScaleKind::kNone:
      return "none";
    case ScaleKind::kPerTensor:
      return "per-tensor";
    case ScaleKind::kPerChannel:
      return "per-channel";
    case ScaleKind::kBlock128:
      return "block128";
  }
  return "?";
}

int64_t scale_count(ScaleKind kind, int64_t rows, int64_t cols) {
  switch (kind) {
    case ScaleKind::kNone:
      return 0;
    case ScaleKind::kPerTensor:
      return 1;
    case ScaleKind::kPerChannel:
      return rows;
    case ScaleKind::kBlock128:
      return ((rows + 127) / 128) * ((cols + 127) / 128);
  }
  return 0;
}

}  // namespace lathe::ops
