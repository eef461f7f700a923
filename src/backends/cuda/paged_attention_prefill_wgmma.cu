// Paged prefill attention on warpgroup MMAs (sm_90a wgmma), head dims 64 and 128, giving every row
// the bytes of the mma.sync kernel (paged_attention_prefill.cu; the arithmetic and its
// invariances: paged_attention_prefill_common.cuh).
//
// One CTA per (128-query tile, q head, sequence): two warpgroups of 64 query rows, each warp's 16
// rows held as mma.sync-layout fragments. Per 64-position KV tile and warpgroup:
//   S (64 x 64)  = Q (registers, loaded once) . K^T (shared memory, K-major)   HD / 16 wgmma k16 steps
//   softmax step per warp on S's accumulators (the mma.sync C layout), P packed to BF16 A fragments
//   O (64 x HD) += P (registers) . V (shared memory, MN-major: trans-b)        4 wgmma k16 steps
// The B operands are read by the tensor cores straight from shared memory, once per warpgroup,
// instead of by every warp through ldmatrix as in the mma.sync kernel, whose shared-memory reads
// bound it. K and V tiles arrive by cp.async, three stages deep (two tiles in flight while one is
// computed), in the no-swizzle core-matrix layout (wgmma.cuh): the 16 bytes of position r, dims
// 8u .. 8u + 7 sit at ((r / 8) * (HD / 8) + u) * 128 + (r % 8) * 16, which is K-major for Q.K^T
// and MN-major for P.V alike. FP8 KV is copied raw and widened into that layout. A warpgroup skips
// the tiles wholly past its rows (they would leave its state bit-unchanged).
#include <cuda_bf16.h>

#include "backends/cuda/paged_attention_prefill_common.cuh"
#include "backends/cuda/wgmma.cuh"

namespace lathe::cuda::prefill {
namespace {

using namespace attn;

constexpr int kWarpgroups = kTileQ / 64;
constexpr int kThreads = kWarpgroups * 128;
constexpr int kStages = 3;      // KV tiles in shared memory: one computed, two arriving
constexpr int kFp8RawPad = 16;  // bytes after each raw FP8 row: the widening reads 8 rows conflict-free

template <typename Kv, int HD>
struct Layout {
  static constexpr bool kFp8 = Kv::kDType == KvDType::kFP8E4M3;
  static constexpr int kQStride = HD + 8;  // padded BF16 rows: ldmatrix reads 8 rows conflict-free
  static constexpr size_t kQBytes = static_cast<size_t>(kTileQ) * kQStride * 2;
  static constexpr size_t kBlockedTileBytes = static_cast<size_t>(kTileKv) * HD * 2;  // one of K or V
  static constexpr size_t kRawRowBytes = HD + kFp8RawPad;
  static constexpr size_t kCopyTileBytes = kFp8 ? kTileKv * kRawRowBytes : kBlockedTileBytes;
  static constexpr size_t kBytes =
      kQBytes + kStages * 2 * kCopyTileBytes + (kFp8 ? 2 * kBlockedTileBytes : 0);
  // Descriptor offsets of the core-matrix layout: between dim groups of 8 (k for K, n for V) and
  // between position groups of 8 (n for K, k for V).
  static constexpr uint32_t kDimGroupBytes = 128;
  static constexpr uint32_t kPosGroupBytes = HD / 8 * 128;
};

// Byte offset of 16-byte unit u (dims 8u .. 8u + 7) of position r in a core-matrix tile.
template <int HD>
__device__ __forceinline__ int blocked_offset(int r, int u) {
  return ((r / 8) * (HD / 8) + u) * 128 + (r % 8) * 16;
}

// The i-th 16-byte unit of a tile this thread handles, as (position, unit): two neighbouring
// units of 8 positions per 16 threads, so a warp writes 512 contiguous bytes of the core-matrix
// layout and reads whole 32-byte sectors of each position's row.
template <int HD>
__device__ __forceinline__ void unit_of(int index, int& r, int& u) {
  const int rest = index >> 4;
  r = (rest / (HD / 16)) * 8 + ((index >> 1) & 7);
  u = (rest % (HD / 16)) * 2 + (index & 1);
}

// Issues the copies of KV tile `tile` into stage buffers dk / dv; positions at or past ctx are
// zero-filled (read nothing). The caller commits the group.
template <typename Kv, int HD>
__device__ __forceinline__ void copy_kv_tile(const Params& p, const CtaTile& c, int tile, unsigned char* dk,
                                             unsigned char* dv) {
  using L = Layout<Kv, HD>;
  constexpr int kElemsPerCopy = 16 / Kv::kBytes;
  constexpr int kCopies = kTileKv * HD / kElemsPerCopy;
  static_assert(kCopies % kThreads == 0, "every thread issues the same number of copies");
#pragma unroll
  for (int i = 0; i < kCopies / kThreads; ++i) {
    const int index = static_cast<int>(threadIdx.x) + i * kThreads;
    int r, col, dst;
    if constexpr (L::kFp8) {  // raw rows: 16 codes a copy
      r = index / (HD / 16);
      col = (index % (HD / 16)) * 16;
      dst = r * static_cast<int>(L::kRawRowBytes) + col;
    } else {
      int u;
      unit_of<HD>(index, r, u);
      col = u * 8;
      dst = blocked_offset<HD>(r, u);
    }
    const int pos = tile * kTileKv + r;
    const bool valid = pos < c.ctx;
    const int64_t src = valid ? c.kv_byte_offset<Kv, HD>(p, pos, col) : 0;
    cp_async16(dk + dst, static_cast<const unsigned char*>(p.k) + src, valid);
    cp_async16(dv + dst, static_cast<const unsigned char*>(p.v) + src, valid);
  }
}

// FP8 only: widens a raw tile (padded rows of codes) into the core-matrix BF16 layout.
template <int HD>
__device__ __forceinline__ void widen_fp8_tile(const unsigned char* raw, unsigned char* dst) {
  constexpr int kUnits = kTileKv * HD / kFragElems;
  static_assert(kUnits % kThreads == 0, "every thread widens the same number of units");
#pragma unroll
  for (int i = 0; i < kUnits / kThreads; ++i) {
    int r, u;
    unit_of<HD>(static_cast<int>(threadIdx.x) + i * kThreads, r, u);
    *reinterpret_cast<uint4*>(dst + blocked_offset<HD>(r, u)) = widen_fp8_unit(
        *reinterpret_cast<const uint2*>(raw + r * static_cast<int>(HD + kFp8RawPad) + u * kFragElems));
  }
}

template <typename Kv, int HD>
__global__ void __launch_bounds__(kThreads, 1) paged_prefill_wgmma_kernel(const Params p) {
#if defined(__CUDA_ARCH__) && !defined(LATHE_WGMMA_COMPILED)
  __trap();  // unreachable: launch_paged_prefill runs this kernel only where device_has_wgmma()
#else
  using L = Layout<Kv, HD>;
  constexpr int kCols = kTileKv / 8;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __nv_bfloat16* sq = reinterpret_cast<__nv_bfloat16*>(smem_raw);
  unsigned char* copies = smem_raw + L::kQBytes;
  const auto copy_k = [&](int stage) { return copies + (2 * stage) * L::kCopyTileBytes; };
  const auto copy_v = [&](int stage) { return copies + (2 * stage + 1) * L::kCopyTileBytes; };
  unsigned char* wide_k = copies + kStages * 2 * L::kCopyTileBytes;  // FP8 only
  unsigned char* wide_v = wide_k + L::kBlockedTileBytes;

  const CtaTile c(p);
  if (c.empty) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wg = warp / 4;                        // warpgroup: rows 64 wg .. 64 wg + 63 of the CTA's tile
  const int wg_row0 = wg * 64 + (warp % 4) * 16;  // this warp's first row in the CTA's tile

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < c.num_kv_tiles) copy_kv_tile<Kv, HD>(p, c, s, copy_k(s), copy_v(s));
    cp_async_commit();
  }
  stage_q<HD, kThreads>(p, c, sq, L::kQStride);
  __syncthreads();
  uint32_t qa[HD / 16][4];  // this warp's 16 rows of Q as A fragments, one per k16 step
#pragma unroll
  for (int kk = 0; kk < HD / 16; ++kk) {
    ldmatrix_x4(qa[kk],
                sq + (wg_row0 + (lane % 8) + 8 * ((lane / 8) % 2)) * L::kQStride + kk * 16 + 8 * (lane / 16));
  }

  const int g = lane / 4, t = lane % 4;
  const int pos_a = c.first_pos + c.tile_row0 + wg_row0 + g;
  const int warp_first_pos = c.first_pos + c.tile_row0 + wg_row0;
  const int wg_last_pos = c.first_pos + c.tile_row0 + wg * 64 + 63;
  const float s_mul = p.scale * kLog2e * (L::kFp8 ? p.k_scale : 1.0f);

  float o[HD / 8][4];
#pragma unroll
  for (int j = 0; j < HD / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
  float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.0f, l_b = 0.0f;

  for (int tile = 0; tile < c.num_kv_tiles; ++tile) {
    const int stage = tile % kStages;
    const int kv0 = tile * kTileKv;
    cp_async_wait<kStages - 2>();  // this tile's group has landed (later ones may still fly)
    if constexpr (!L::kFp8) fence_shared_for_wgmma();
    __syncthreads();  // every thread's copies of the tile are visible; no warpgroup still reads the
                      // stage refilled next (each waited for its last wgmma)
    const int next = tile + kStages - 1;
    if (next < c.num_kv_tiles)
      copy_kv_tile<Kv, HD>(p, c, next, copy_k(next % kStages), copy_v(next % kStages));
    cp_async_commit();
    const unsigned char* sk = copy_k(stage);
    const unsigned char* sv = copy_v(stage);
    if constexpr (L::kFp8) {
      widen_fp8_tile<HD>(copy_k(stage), wide_k);
      widen_fp8_tile<HD>(copy_v(stage), wide_v);
      fence_shared_for_wgmma();
      __syncthreads();
      sk = wide_k;
      sv = wide_v;
    }
    if (kv0 > wg_last_pos) continue;  // wholly past this warpgroup's rows

    float s[kCols][4];
#pragma unroll
    for (int j = 0; j < kCols; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
    const uint64_t k_desc = wgmma_desc(sk, L::kDimGroupBytes, L::kPosGroupBytes);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      wgmma_m64n64k16_rs<0>(s, qa[kk], k_desc + kk * (2 * L::kDimGroupBytes >> 4));
    }
    wgmma_commit();
    wgmma_wait<0>();

    uint32_t pa[kTileKv / 16][4];
    softmax_step(s, kv0 + kTileKv - 1 > warp_first_pos, kv0, t, s_mul, pos_a, pos_a + 8, m_a, m_b, l_a, l_b,
                 o, pa);

    const uint64_t v_desc = wgmma_desc(sv, L::kPosGroupBytes, L::kDimGroupBytes);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kTileKv / 16; ++kk) {
      const uint64_t desc = v_desc + kk * (2 * L::kPosGroupBytes >> 4);
      if constexpr (HD == 128) {
        wgmma_m64n128k16_rs<1>(o, pa[kk], desc);
      } else {
        wgmma_m64n64k16_rs<1>(o, pa[kk], desc);
      }
    }
    wgmma_commit();
    wgmma_wait<0>();
  }

  store_rows<HD>(p, c, o, l_a, l_b, L::kFp8 ? p.v_scale : 1.0f, c.tile_row0 + wg_row0 + g, t);
#endif
}

template <typename Kv, int HD>
cudaError_t launch(const Params& p, int32_t num_seqs, int32_t max_query_len, cudaStream_t stream) {
  constexpr size_t smem = Layout<Kv, HD>::kBytes;
  // The shared-memory opt-in is a per-function attribute: set once per process (single device),
  // on the first launch, which callers make outside graph capture.
  static const cudaError_t opt_in =
      cudaFuncSetAttribute(paged_prefill_wgmma_kernel<Kv, HD>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(smem));
  if (opt_in != cudaSuccess) return opt_in;
  const int32_t q_tiles = (max_query_len + kTileQ - 1) / kTileQ;
  if (q_tiles > 65535) return cudaErrorInvalidValue;  // grid.y limit: 8.4M rows in one chunk
  const dim3 grid(p.num_heads, q_tiles, num_seqs);
  paged_prefill_wgmma_kernel<Kv, HD><<<grid, kThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_wgmma(const Params& p, KvDType dtype, int32_t head_dim, int32_t num_seqs,
                         int32_t max_query_len, cudaStream_t stream) {
  const bool bf16 = dtype == KvDType::kBF16;
  switch (head_dim) {
    case 64:
      return bf16 ? launch<Bf16Kv, 64>(p, num_seqs, max_query_len, stream)
                  : launch<Fp8Kv, 64>(p, num_seqs, max_query_len, stream);
    case 128:
      return bf16 ? launch<Bf16Kv, 128>(p, num_seqs, max_query_len, stream)
                  : launch<Fp8Kv, 128>(p, num_seqs, max_query_len, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace lathe::cuda::prefill
