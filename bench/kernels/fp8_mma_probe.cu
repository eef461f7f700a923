// lathe_probe_fp8_mma: can the FP8 decode GEMV run on FP8 tensor cores without losing W8A16
// accuracy?
//
// A measurement tool, not a kernel of the engine. The W8A16 GEMV converts every weight code to
// bf16 before a bf16 MMA (most of its instructions). The alternative measured here keeps the
// weights as E4M3 MMA operands and writes the bf16 activations exactly as three E5M2 pieces with a
// power-of-two scale per (token row, 128-k step) (gemv_xsplit.cuh), so y = sum over pieces of
// W x piece, three m16n8k32 E4M3 x E5M2 MMAs per 32 k. Its only new error is the tensor core's
// FP8 accumulation, which this probe measures against a float64 reference, beside the production
// bf16 arithmetic (gemv_half) on the same data:
//   bf16     production: weights converted to bf16, m16n8k16 bf16 MMAs, fp32 step sums;
//   e5m2x3   three pieces, all MMAs of a 128-k step chained into one accumulator;
//   e5m2x3/1 three pieces, every MMA from zero and added in fp32 (promotion per MMA).
// It also checks that the pieces reproduce every activation exactly.
//
// Measured on the H200 (docs/PERFORMANCE.md, session 10): the pieces are exact (bar values 2^23
// below their step's largest) and both piece modes are as accurate as the bf16 arithmetic, but on
// sm_90 ptxas lowers mma.sync m16n8k32 E4M3/E5M2 to F2FP.F16.E4M3.UNPACK conversions + f16
// HMMA.16816 (cuobjdump -sass), so it converts every weight anyway: the GEMV variant built on it
// (":x3") was slower than `auto` everywhere and was removed. Hopper's native FP8 MMA is wgmma
// (QGMMA in the SASS): the pieces on wgmma are ~500x less accurate than the bf16 arithmetic
// (normalized error 2.2e-4 chained per 128-k step, 1.2e-4 promoted after every k32 wgmma, i.e.
// its FP8 accumulation keeps about 13 bits), still far below a bf16 output's rounding. The ':wg'
// GEMV built on it (branch wip/gemv-wgmma) is recorded in docs/PERFORMANCE.md, session 10.
//
// Usage: lathe_probe_fp8_mma [N K]   (default 4096 4096; 8 token rows)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "backends/cuda/gemv_common.cuh"
#include "fp8_xsplit.cuh"
#include "core/numeric.h"
#include "probe_check.h"

namespace {

using namespace lathe::cuda::gemv_detail;


constexpr int kCols = 8;
constexpr int kStep = 128;

// One thread per 8 activations; the 16 threads of a (column, step) share its scale.
// pieces: [col][step][3][128] codes; exps: [col][step].
__global__ void split_kernel(const __nv_bfloat16* x, uint8_t* pieces, int* exps, int k) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  const int steps = k / kStep;
  const int chunk = idx % 16;
  const int cs = idx / 16;  // col * steps + step
  if (cs >= kCols * steps) return;
  const int col = cs / steps, s = cs % steps;
  const uint4 v = *reinterpret_cast<const uint4*>(x + static_cast<int64_t>(col) * k + s * kStep + chunk * 8);
  uint32_t mx = bf16x8_max_magnitude_bits(v);
#pragma unroll
  for (int o = 1; o < 16; o <<= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, o));
  const int e = xsplit_exponent(mx);
  uint2 p[3];
  bf16x8_to_e5m2x3(v, pow2f(e), p);
  for (int j = 0; j < 3; ++j)
    *reinterpret_cast<uint2*>(pieces + (static_cast<int64_t>(cs) * 3 + j) * kStep + chunk * 8) = p[j];
  if (chunk == 0) exps[cs] = e;
}

// One warp per 16 weight rows, 8 columns. mode 0: bf16 production arithmetic; 1: pieces, one
// accumulator chain per step; 2: pieces, each MMA from zero, fp32 adds. y: [col][n].
__global__ void gemv_probe_kernel(const uint8_t* w, const __nv_bfloat16* x, const uint8_t* pieces, const int* exps,
                                  float* y, int n, int k, int mode) {
  const int lane = threadIdx.x & 31;
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int g = lane >> 2, c = lane & 3;
  const int row0 = warp * 16;
  if (row0 >= n) return;
  const int steps = k / kStep;
  float acc[1][4] = {{0, 0, 0, 0}};
  for (int s = 0; s < steps; ++s) {
    uint4 wv[4];  // [half][row g, row g + 8]
    for (int h = 0; h < 2; ++h) {
      wv[h * 2 + 0] = *reinterpret_cast<const uint4*>(w + static_cast<int64_t>(row0 + g) * k + s * kStep + h * 64 + c * 16);
      wv[h * 2 + 1] = *reinterpret_cast<const uint4*>(w + static_cast<int64_t>(row0 + g + 8) * k + s * kStep + h * 64 + c * 16);
    }
    float part[1][4] = {{0, 0, 0, 0}};
    if (mode == 0) {
      for (int h = 0; h < 2; ++h) {
        uint4 xv[1][2];
        const __nv_bfloat16* src = x + static_cast<int64_t>(g) * k + s * kStep + h * 64 + c * 16;
        xv[0][0] = *reinterpret_cast<const uint4*>(src);
        xv[0][1] = *reinterpret_cast<const uint4*>(src + 8);
        gemv_half<1, true, false>(part, &wv[h * 2], xv);
      }
      for (int i = 0; i < 4; ++i) acc[0][i] = __fadd_rn(acc[0][i], part[0][i]);
      continue;
    }
    for (int h = 0; h < 2; ++h) {
      for (int j = 0; j < 2; ++j) {
        for (int p = 0; p < 3; ++p) {
          const uint8_t* src = pieces + ((static_cast<int64_t>(g) * steps + s) * 3 + p) * kStep + h * 64 + c * 16 + 8 * j;
          const uint2 b = *reinterpret_cast<const uint2*>(src);
          if (mode == 1) {
            mma_e4m3_e5m2(part[0], word(wv[h * 2], 2 * j), word(wv[h * 2 + 1], 2 * j), word(wv[h * 2], 2 * j + 1),
                          word(wv[h * 2 + 1], 2 * j + 1), b.x, b.y);
          } else {
            float d[4] = {0, 0, 0, 0};
            mma_e4m3_e5m2(d, word(wv[h * 2], 2 * j), word(wv[h * 2 + 1], 2 * j), word(wv[h * 2], 2 * j + 1),
                          word(wv[h * 2 + 1], 2 * j + 1), b.x, b.y);
            for (int i = 0; i < 4; ++i) part[0][i] = __fadd_rn(part[0][i], d[i]);
          }
        }
      }
    }
    // part[i]: row g (+8 for i >= 2), column 2c + (i & 1), in units of 2^e of that column's step.
    for (int i = 0; i < 4; ++i) {
      const int col = 2 * c + (i & 1);
      const float unscale = pow2f(-exps[col * steps + s]);
      acc[0][i] = __fadd_rn(acc[0][i], __fmul_rn(part[0][i], unscale));
    }
  }
  for (int i = 0; i < 4; ++i) {
    const int row = row0 + g + (i >= 2 ? 8 : 0);
    const int col = 2 * c + (i & 1);
    y[static_cast<int64_t>(col) * n + row] = acc[0][i];
  }
}

// ---- wgmma (sm_90a): Hopper's native FP8 MMA ----------------------------------------------
// One warpgroup per 64 weight rows; B = the 8 columns' three pieces as 24 columns (n = piece * 8
// + column). Core matrix (i, j) (rows 8i.., k bytes 16j..) at byte i * 256 + j * 128 of a tile;
// lbo / sbo are the descriptor's reading of that layout (the probe tries both assignments).
// promote_each: every wgmma from zero and added in fp32; otherwise the 4 wgmmas of a 128-k step
// chain in the tensor core. y: [col][n].
__global__ void wgmma_probe_kernel(const uint8_t* w, const uint8_t* pieces, const int* exps, float* y, int n, int k,
                                   uint32_t lbo, uint32_t sbo, bool promote_each) {
  __shared__ __align__(128) uint8_t a_tile[64 * 32];
  __shared__ __align__(128) uint8_t b_tile[24 * 32];
  const int tid = threadIdx.x;
  const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
  const int row0 = blockIdx.x * 64;
  const int steps = k / kStep;
  float acc[4] = {0, 0, 0, 0};  // rows 16 warp + g (+8), columns 2 t4 (+1)
  for (int s = 0; s < steps; ++s) {
    float step_sum[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int kk = 0; kk < kStep / 32; ++kk) {
      {
        const int r = tid >> 1, j = tid & 1;
        *reinterpret_cast<uint4*>(a_tile + (r >> 3) * 256 + j * 128 + (r & 7) * 16) =
            *reinterpret_cast<const uint4*>(w + static_cast<int64_t>(row0 + r) * k + s * kStep + kk * 32 + j * 16);
        if (tid < 48) {
          const int p = r >> 3, col = r & 7;
          *reinterpret_cast<uint4*>(b_tile + (r >> 3) * 256 + j * 128 + (r & 7) * 16) =
              *reinterpret_cast<const uint4*>(pieces + ((static_cast<int64_t>(col) * steps + s) * 3 + p) * kStep +
                                              kk * 32 + j * 16);
        }
      }
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      __syncthreads();
      float d[12];
      for (int i = 0; i < 12; ++i) d[i] = promote_each ? 0.0f : step_sum[i];
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      wgmma_m64n24k32(d, wgmma_desc(static_cast<uint32_t>(__cvta_generic_to_shared(a_tile)), lbo, sbo, 0),
                      wgmma_desc(static_cast<uint32_t>(__cvta_generic_to_shared(b_tile)), lbo, sbo, 0), promote_each || kk > 0 ? 1 : 0);
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
      for (int i = 0; i < 12; ++i) step_sum[i] = promote_each ? __fadd_rn(step_sum[i], d[i]) : d[i];
      __syncthreads();
    }
    // step_sum[p * 4 + i]: piece p, row 16 warp + g (+8 for i >= 2), column 2 t4 + (i & 1).
    for (int i = 0; i < 4; ++i) {
      const int col = 2 * t4 + (i & 1);
      const float v = __fadd_rn(__fadd_rn(step_sum[i], step_sum[4 + i]), step_sum[8 + i]);
      acc[i] = __fadd_rn(acc[i], __fmul_rn(v, pow2f(-exps[col * steps + s])));
    }
  }
  for (int i = 0; i < 4; ++i) {
    const int row = row0 + 16 * warp + g + (i >= 2 ? 8 : 0);
    y[static_cast<int64_t>(2 * t4 + (i & 1)) * n + row] = acc[i];
  }
}

float e5m2_value(uint8_t code) { return lathe::fp8_e5m2_to_float(code); }

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 2 ? std::atoi(argv[1]) : 4096;
  const int k = argc > 2 ? std::atoi(argv[2]) : 4096;
  if (n % 64 != 0 || k % kStep != 0) {
    std::fprintf(stderr, "n must be a multiple of 64 and k of 128\n");
    return 2;
  }
  const int steps = k / kStep;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> code(0, 255);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::vector<uint8_t> w(static_cast<size_t>(n) * k);
  for (auto& b : w) {
    do b = static_cast<uint8_t>(code(rng));
    while ((b & 0x7f) == 0x7f);  // no NaN codes
  }
  // Activations with a wide range: normal values, 1% outliers x 300, 5% tiny values x 1e-6.
  std::vector<uint16_t> xb(static_cast<size_t>(kCols) * k);
  for (auto& v : xb) {
    float f = normal(rng);
    const float u = unit(rng);
    if (u < 0.01f) f *= 300.0f;
    else if (u < 0.06f) f *= 1e-6f;
    v = lathe::to_bf16(f).bits;
  }

  uint8_t *dw, *dp;
  __nv_bfloat16* dx;
  int* de;
  float* dy;
  PROBE_CHECK(cudaMalloc(&dw, w.size()));
  PROBE_CHECK(cudaMalloc(&dx, xb.size() * 2));
  PROBE_CHECK(cudaMalloc(&dp, static_cast<size_t>(kCols) * steps * 3 * kStep));
  PROBE_CHECK(cudaMalloc(&de, static_cast<size_t>(kCols) * steps * sizeof(int)));
  PROBE_CHECK(cudaMalloc(&dy, static_cast<size_t>(kCols) * n * sizeof(float)));
  PROBE_CHECK(cudaMemcpy(dw, w.data(), w.size(), cudaMemcpyHostToDevice));
  PROBE_CHECK(cudaMemcpy(dx, xb.data(), xb.size() * 2, cudaMemcpyHostToDevice));
  const int split_threads = kCols * steps * 16;
  split_kernel<<<(split_threads + 255) / 256, 256>>>(dx, dp, de, k);
  PROBE_CHECK(cudaGetLastError());

  // Exactness of the pieces.
  std::vector<uint8_t> pieces(static_cast<size_t>(kCols) * steps * 3 * kStep);
  std::vector<int> exps(static_cast<size_t>(kCols) * steps);
  PROBE_CHECK(cudaMemcpy(pieces.data(), dp, pieces.size(), cudaMemcpyDeviceToHost));
  PROBE_CHECK(cudaMemcpy(exps.data(), de, exps.size() * sizeof(int), cudaMemcpyDeviceToHost));
  int64_t inexact = 0;
  double worst = 0;
  for (int col = 0; col < kCols; ++col) {
    for (int s = 0; s < steps; ++s) {
      const int cs = col * steps + s;
      for (int i = 0; i < kStep; ++i) {
        double sum = 0;
        for (int j = 0; j < 3; ++j) sum += e5m2_value(pieces[(static_cast<size_t>(cs) * 3 + j) * kStep + i]);
        sum = std::ldexp(sum, -exps[cs]);
        const double want = lathe::to_float(lathe::bf16{xb[static_cast<size_t>(col) * k + s * kStep + i]});
        if (sum != want) {
          ++inexact;
          worst = std::max(worst, std::fabs(sum - want));
        }
      }
    }
  }
  std::printf("pieces: %lld of %d activations not exact (largest error %.3g)\n", static_cast<long long>(inexact),
              kCols * k, worst);

  // Float64 reference.
  std::vector<double> ref(static_cast<size_t>(kCols) * n);
  for (int col = 0; col < kCols; ++col) {
    for (int r = 0; r < n; ++r) {
      double sum = 0;
      for (int i = 0; i < k; ++i)
        sum += static_cast<double>(lathe::fp8_e4m3_to_float(w[static_cast<size_t>(r) * k + i])) *
               lathe::to_float(lathe::bf16{xb[static_cast<size_t>(col) * k + i]});
      ref[static_cast<size_t>(col) * n + r] = sum;
    }
  }
  const char* names[] = {"bf16 (production)",           "e5m2x3 chained per step",
                         "e5m2x3 promoted per MMA",     "wgmma lbo128/sbo256 step",
                         "wgmma lbo128/sbo256 each",    "wgmma lbo256/sbo128 step",
                         "wgmma lbo256/sbo128 each"};
  std::vector<float> y(static_cast<size_t>(kCols) * n);
  for (int mode = 0; mode < 7; ++mode) {
    PROBE_CHECK(cudaMemset(dy, 0, y.size() * sizeof(float)));
    if (mode < 3) {
      gemv_probe_kernel<<<n / 16 / 4, 128>>>(dw, dx, dp, de, dy, n, k, mode);
    } else {
      const bool swapped = mode >= 5;
      wgmma_probe_kernel<<<n / 64, 128>>>(dw, dp, de, dy, n, k, swapped ? 256 : 128, swapped ? 128 : 256,
                                          (mode - 3) % 2 == 1);
    }
    PROBE_CHECK(cudaGetLastError());
    PROBE_CHECK(cudaDeviceSynchronize());
    PROBE_CHECK(cudaMemcpy(y.data(), dy, y.size() * sizeof(float), cudaMemcpyDeviceToHost));
    double num = 0, den = 0, largest = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      const double d = y[i] - ref[i];
      num += d * d;
      den += ref[i] * ref[i];
      largest = std::max(largest, std::fabs(d));
    }
    const double rms = std::sqrt(den / static_cast<double>(y.size()));
    std::printf("%-26s normalized error %.3e  (largest error / rms of y %.3e)\n", names[mode], std::sqrt(num / den),
                largest / rms);
  }
  return 0;
}
