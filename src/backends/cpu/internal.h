#pragma once
// Helpers shared by the CPU op files (internal to backends/cpu; defined in row_ops.cpp).
#include <cstdint>

#include "backends/cpu/cpu_ops.h"
#include "core/dtype.h"

namespace lathe::cpu::detail {

// Address of row `row` of a Rows view.
inline char* row_ptr(const Rows& rows, int64_t row) {
  return static_cast<char*>(rows.data) + row * rows.stride * static_cast<int64_t>(dtype_size(rows.dtype));
}

// Throws lathe::Error naming `op` and `what` unless the view holds `cols`-wide rows of an
// activation dtype (stride >= cols, data present when rows > 0).
void check_rows(const char* op, const char* what, const Rows& view, int64_t rows, int64_t cols);

// Rows per parallel task so that each task carries about `work_per_task` element operations.
int64_t rows_per_task(int64_t work_per_row, int64_t work_per_task = 1 << 15);

// dot4 with the four weight rows read directly as bf16 bits (widened exactly to f32): the same
// lanes and order as dot4 over the decoded rows, so bit-identical to it. Used when a decode
// pass would not be amortised over several activation rows.
void dot4_bf16(const float* x, const uint16_t* const w[4], int64_t n, float out[4]);

}  // namespace lathe::cpu::detail
