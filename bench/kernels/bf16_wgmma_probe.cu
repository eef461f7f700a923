// Probe: does Hopper's warpgroup MMA (wgmma, A from registers, B from shared memory) add bf16
// products into an fp32 accumulator with exactly the bits of the warp-level mma.sync m16n8k16?
//
// Why it matters: the decode GEMV tiers (src/backends/cuda/gemv_common.cuh) must give every output
// row the bytes of the m = 1 kernel. At m = 16 a warp issues ~1.46x the instructions of m = 1
// (twice the MMAs, twice the activation loads from shared memory; session 22's profile). One
// wgmma m64n16k16 per 16-k chunk would replace a warp's two mma.sync and both activation loads,
// but only if its fp32 sums are bit-identical to mma.sync's (otherwise m = 1 would have to move to
// wgmma too, and wgmma n8 against n16 would need the same check).
//
// What it does: one warpgroup per 64 rows of A (bf16, [n][k]); B = 16 activation columns (bf16,
// [16][k]). Each 16-k chunk's A fragment is loaded once into registers and fed to (1) two mma.sync
// m16n8k16 (columns 0-7, 8-15), (2) one wgmma m64n16k16, (3) two wgmma m64n8k16, each chaining the
// chunks of a 128-k step into an fp32 partial that starts at zero, and the partials into a total
// with fmaf(partial, 1, total) as the GEMV does. It prints how many of the n x 16 totals differ
// between the arms, bitwise, over several seeds and value ranges, and exits 1 if any differ.
//
// Usage: lathe_probe_bf16_wgmma [n k]   (n a multiple of 64, k a multiple of 128, k <= 1536)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "backends/cuda/gemv_common.cuh"
#include "backends/cuda/gemv_wgmma.cuh"
#include "probe_check.h"

namespace {

using namespace lathe::cuda::gemv_detail;  // the GEMV's own MMA wrappers (mma_bf16, wgmma_m64n*)
using lathe::cuda::wgmma_commit;            // the ordering instructions (wgmma.cuh)
using lathe::cuda::wgmma_fence;
using lathe::cuda::wgmma_wait;

constexpr int kCols = 16;
constexpr int kStep = 128;
constexpr int kMaxK = 1536;  // B for all of K in static shared memory: 16 x kMaxK bf16 = 48 KB

// y[arm][col][row]: arm 0 mma.sync, 1 wgmma n16, 2 wgmma n8 (twice).
__global__ void probe_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, float* y, int n, int k) {
  // B chunk c (16 k) at byte c * 512: core (column group j, k half h) at j * 256 + h * 128, row r
  // (column 8j + r) the 8 bf16 at k = 16c + 8h...
  __shared__ __align__(128) uint8_t b_smem[kCols * kMaxK * 2];
  const int tid = threadIdx.x;
  const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
  const int chunks = k / 16;
  for (int i = tid; i < chunks * 4 * 8; i += blockDim.x) {
    const int c = i / 32, core = (i / 8) % 4, r = i % 8;
    const int j = core >> 1, h = core & 1;
    *reinterpret_cast<uint4*>(b_smem + c * 512 + j * 256 + h * 128 + r * 16) =
        *reinterpret_cast<const uint4*>(b + static_cast<int64_t>(8 * j + r) * k + 16 * c + 8 * h);
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();

  const int row0 = blockIdx.x * 64 + warp * 16;
  float total[3][8] = {};
  for (int s = 0; s < k / kStep; ++s) {
    float part_mma[2][4] = {};
    float part_n16[8] = {};
    float part_n8[2][4] = {};
    for (int cc = 0; cc < kStep / 16; ++cc) {
      const int c = s * (kStep / 16) + cc;
      const int k0 = 16 * c + 2 * t;
      uint32_t af[4];  // m16n8k16 A fragment: rows g / g + 8, k pairs 2t / 2t + 8
      af[0] = *reinterpret_cast<const uint32_t*>(a + static_cast<int64_t>(row0 + g) * k + k0);
      af[1] = *reinterpret_cast<const uint32_t*>(a + static_cast<int64_t>(row0 + g + 8) * k + k0);
      af[2] = *reinterpret_cast<const uint32_t*>(a + static_cast<int64_t>(row0 + g) * k + k0 + 8);
      af[3] = *reinterpret_cast<const uint32_t*>(a + static_cast<int64_t>(row0 + g + 8) * k + k0 + 8);
      for (int j = 0; j < 2; ++j) {
        const uint32_t b0 = *reinterpret_cast<const uint32_t*>(b + static_cast<int64_t>(8 * j + g) * k + k0);
        const uint32_t b1 =
            *reinterpret_cast<const uint32_t*>(b + static_cast<int64_t>(8 * j + g) * k + k0 + 8);
        mma_bf16(part_mma[j], af[0], af[1], af[2], af[3], b0, b1);
      }
      const uint8_t* chunk = b_smem + c * 512;
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
      wgmma_fence();
      wgmma_m64n16k16(part_n16, af, wg_chunk_desc(chunk));
      wgmma_m64n8k16(part_n8[0], af, wg_chunk_desc(chunk));
      wgmma_m64n8k16(part_n8[1], af, wg_chunk_desc(chunk + 256));
      wgmma_commit();
      wgmma_wait<0>();
#else
      __trap();  // built for an architecture without wgmma (the probe needs sm_90a)
#endif
    }
    for (int j = 0; j < 2; ++j) {
      for (int i = 0; i < 4; ++i) {
        total[0][4 * j + i] = __fmaf_rn(part_mma[j][i], 1.0f, total[0][4 * j + i]);
        total[1][4 * j + i] = __fmaf_rn(part_n16[4 * j + i], 1.0f, total[1][4 * j + i]);
        total[2][4 * j + i] = __fmaf_rn(part_n8[j][i], 1.0f, total[2][4 * j + i]);
      }
    }
  }
  for (int arm = 0; arm < 3; ++arm) {
    for (int j = 0; j < 2; ++j) {
      for (int i = 0; i < 4; ++i) {
        const int row = row0 + g + (i >= 2 ? 8 : 0);
        const int col = 8 * j + 2 * t + (i & 1);
        y[(static_cast<int64_t>(arm) * kCols + col) * n + row] = total[arm][4 * j + i];
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 2 ? std::atoi(argv[1]) : 1024;
  const int k = argc > 2 ? std::atoi(argv[2]) : 1536;
  if (n % 64 != 0 || k % kStep != 0 || k > kMaxK) {
    std::fprintf(stderr, "n must be a multiple of 64, k a multiple of 128 up to %d\n", kMaxK);
    return 2;
  }
  __nv_bfloat16 *da, *db;
  float* dy;
  PROBE_CHECK(cudaMalloc(&da, sizeof(__nv_bfloat16) * n * k));
  PROBE_CHECK(cudaMalloc(&db, sizeof(__nv_bfloat16) * kCols * k));
  PROBE_CHECK(cudaMalloc(&dy, sizeof(float) * 3 * kCols * n));
  int64_t differ_n16 = 0, differ_n8 = 0, differ_n8_n16 = 0, compared = 0;
  // Value ranges: exponent spread of A and B (2^[-e, e]); 0 = plain normal values. Wide spreads
  // exercise the tensor core's alignment of products with very different magnitudes.
  const int spreads[] = {0, 4, 12, 30};
  for (int seed = 1; seed <= 4; ++seed) {
    for (int spread : spreads) {
      std::mt19937 rng(seed * 101 + spread);
      std::normal_distribution<float> normal(0.0f, 1.0f);
      std::uniform_int_distribution<int> expo(-spread, spread);
      std::vector<__nv_bfloat16> ha(static_cast<size_t>(n) * k), hb(static_cast<size_t>(kCols) * k);
      for (auto& v : ha) v = __float2bfloat16(std::ldexp(normal(rng), expo(rng)));
      for (auto& v : hb) v = __float2bfloat16(std::ldexp(normal(rng), expo(rng)));
      PROBE_CHECK(cudaMemcpy(da, ha.data(), sizeof(__nv_bfloat16) * ha.size(), cudaMemcpyHostToDevice));
      PROBE_CHECK(cudaMemcpy(db, hb.data(), sizeof(__nv_bfloat16) * hb.size(), cudaMemcpyHostToDevice));
      probe_kernel<<<n / 64, 128>>>(da, db, dy, n, k);
      PROBE_CHECK(cudaGetLastError());
      std::vector<float> hy(static_cast<size_t>(3) * kCols * n);
      PROBE_CHECK(cudaMemcpy(hy.data(), dy, sizeof(float) * hy.size(), cudaMemcpyDeviceToHost));
      const size_t plane = static_cast<size_t>(kCols) * n;
      int64_t d16 = 0, d8 = 0, d816 = 0;
      for (size_t i = 0; i < plane; ++i) {
        uint32_t m, w16, w8;
        std::memcpy(&m, &hy[i], 4);
        std::memcpy(&w16, &hy[plane + i], 4);
        std::memcpy(&w8, &hy[2 * plane + i], 4);
        d16 += m != w16;
        d8 += m != w8;
        d816 += w8 != w16;
      }
      std::printf(
          "seed %d spread 2^+-%-2d: wgmma n16 != mma.sync %lld, wgmma n8 != mma.sync %lld, n8 != n16 %lld of "
          "%zu\n",
          seed, spread, static_cast<long long>(d16), static_cast<long long>(d8), static_cast<long long>(d816),
          plane);
      differ_n16 += d16;
      differ_n8 += d8;
      differ_n8_n16 += d816;
      compared += static_cast<int64_t>(plane);
    }
  }
  std::printf(
      "bf16 wgmma probe (n %d, k %d): of %lld sums, wgmma n16 differs from mma.sync in %lld, n8 in %lld, "
      "n8 from n16 in %lld\n",
      n, k, static_cast<long long>(compared), static_cast<long long>(differ_n16),
      static_cast<long long>(differ_n8), static_cast<long long>(differ_n8_n16));
  cudaFree(da);
  cudaFree(db);
  cudaFree(dy);
  return differ_n16 + differ_n8 + differ_n8_n16 == 0 ? 0 : 1;
}
