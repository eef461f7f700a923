#pragma once
// Tensor maps of a paged K or V pool for the copy engine (TMA), shared by the kernels that copy
// whole-block boxes of it: the split-K decode's tensor-copy variants and the warp-specialised
// prefill.
#include <cuda.h>

#include "backends/cuda/paged_attention.h"
#include "backends/cuda/tensor_map.h"

namespace lathe::cuda {

// K or V (`base`, laid out as PagedKv describes) as a 5-D tensor, innermost first: the 128 bytes
// of a row's piece, slot in block, 128-byte piece of the row, KV head, block. The pieces get a
// dimension of their own, outside the slots, so that one box of box_rows slots x box_pieces pieces
// lands in shared memory as [piece][box_rows rows][128 bytes], 128-byte swizzled (the swizzle caps
// a box's inner extent at 128 bytes). box_rows (<= 256, the copy engine's limit) must divide
// kv.block_size; needs kv.num_blocks > 0. Encoded on the host per launch; a captured graph keeps
// the parameter bytes, so replays cost nothing. False if the driver refuses.
// l2_promotion_bytes: the L2 promotion of the copies' requests (0 = none, 64, 128 or 256,
// l2_promotion_supported; each user states the one it measured best).
bool encode_paged_kv_map(const void* base, const PagedKv& kv, int box_rows, int box_pieces, CUtensorMap& map,
                         int l2_promotion_bytes);

}  // namespace lathe::cuda
