// lathe_probe_kv_walk: how fast can plain loads walk a paged KV cache?
//
// A measurement tool, not a kernel of the engine. Session 13 found the split-K decode kernel's
// tensor-copy stream ~18% slower than one linear read of the same bytes at batch 1 (268 MB in
// ~73 µs against ~62 µs, arithmetic removed). This probe reads the same pages with ordinary
// 16-byte loads, folding them into a checksum, in three orders, beside a linear read of the same
// byte count:
//   linear  one contiguous region (backends/cuda/probe.h read_probe);
//   chunks  every (sequence, KV head, block) 4 KB chunk of K and of V, in table order, dealt to
//           all warps of a full grid (the page placement alone); `chunks bN` the same over a pool
//           of N-token blocks (N x 256-byte chunks: 16 KB at 64), each chunk read by one warp with
//           all its loads in flight (session 36: do longer contiguous runs close the gap?);
//   split   the decode kernel's work split: one CTA per (KV head, split, sequence) with 6 warps,
//           warp w taking 32-position tiles w, w + 6, ... of its split, K and V of a tile loaded
//           together (the split structure and grid, without the copy engine). `split xN` puts N
//           CTAs on each split (the split cut into N contiguous slices).
// Layout as the engine's cache: K and V are separate pools [blocks][8 KV heads][16 slots][128]
// BF16 (4 KB per block and head); every sequence's blocks are shuffled over the pool; launches
// inside one graph rotate over disjoint block sets until a graph reads >= 512 MB.
//
// The first cell measured in a process read 10-15% slow on the H200 (session 14, calls 13-14: the
// same cell later in the process was not), so the first cell is measured once unprinted.
//
// Usage: lathe_probe_kv_walk [BATCH CONTEXT ...]   (default: 1 65536  1 16384  16 4096)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <numeric>
#include <random>
#include <type_traits>
#include <vector>

#include "backends/cuda/probe.h"
#include "common/graph_timing.h"
#include "common/read_ceiling.h"
#include "kernels/probe_check.h"

namespace {

constexpr int kKvHeads = 8;
constexpr int kBlockTokens = 16;
constexpr int kChunkBytes = kBlockTokens * 128 * 2;  // one block of one head: 4 KB
constexpr int kBlockBytes = kKvHeads * kChunkBytes;  // one block of all heads
constexpr int kSplits = 9;                           // auto's split count for 32 query heads
constexpr int kMinPerSplit = 128;                    // the split-length floor
constexpr int kTile = 32;                            // positions per warp tile (variant 21)
constexpr int kWarps = 6;                            // warps per split CTA (variant 21)
constexpr size_t kRotateBytes = size_t{512} << 20;

struct Walk {
  const uint8_t* k;
  const uint8_t* v;
  const int32_t* table;  // [seq][blocks_per_seq]
  int blocks_per_seq;
  int seqs;
  int context;
  unsigned* sink;
};

__device__ __forceinline__ uint32_t fold(const uint4& x) {
  return x.x ^ x.y ^ x.z ^ x.w;
}

// The chunks walk over a pool of kTokens-token blocks ([blocks][kKvHeads][kTokens][128] BF16):
// chunk c of [seq][head][block][K, V] per warp in turn, kTokens / 2 loads of 16 bytes per lane,
// all in flight before any is used (kTokens = 16: the engine's former layout, 4 KB chunks).
template <int kTokens>
__global__ void chunks_bt_kernel(Walk w) {
  constexpr int kChunk = kTokens * 256, kLoads = kChunk / 512;
  const int lane = threadIdx.x % 32;
  const int64_t warp = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * blockDim.x / 32;
  const int64_t total = static_cast<int64_t>(w.seqs) * kKvHeads * w.blocks_per_seq * 2;
  uint32_t acc = 0;
  for (int64_t c = warp; c < total; c += warps) {
    const int kv = static_cast<int>(c & 1);
    const int64_t rest = c >> 1;
    const int j = static_cast<int>(rest % w.blocks_per_seq);
    const int64_t sh = rest / w.blocks_per_seq;
    const int head = static_cast<int>(sh % kKvHeads), seq = static_cast<int>(sh / kKvHeads);
    const int64_t block = w.table[static_cast<int64_t>(seq) * w.blocks_per_seq + j];
    const uint8_t* chunk = (kv ? w.v : w.k) + (block * kKvHeads + head) * kChunk;
    uint4 x[kLoads];
#pragma unroll
    for (int i = 0; i < kLoads; ++i)
      x[i] = __ldg(reinterpret_cast<const uint4*>(chunk + i * 512 + lane * 16));
#pragma unroll
    for (int i = 0; i < kLoads; ++i) acc ^= fold(x[i]);
  }
  if (acc == 0x9e3779b9u) *w.sink = acc;
}

// Grid (KV heads, splits x slices, seqs), kWarps warps: the decode kernel's split and tile walk.
__global__ void split_kernel(Walk w, int slices) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int head = blockIdx.x, split = blockIdx.y / slices, slice = blockIdx.y % slices, seq = blockIdx.z;
  const int per = max((w.context + kSplits - 1) / kSplits, kMinPerSplit);
  const int split_start = min(split * per, w.context), split_end = min(split_start + per, w.context);
  const int slice_len = (split_end - split_start + slices - 1) / slices;
  const int start = min(split_start + slice * slice_len, split_end), end = min(start + slice_len, split_end);
  const int32_t* table = w.table + static_cast<int64_t>(seq) * w.blocks_per_seq;
  uint32_t acc = 0;
  for (int t = (start & ~(kTile - 1)) + warp * kTile; t < end; t += kWarps * kTile) {
    // A tile: 2 blocks of this head, K and V, 16 KB; all 32 loads per lane issued together.
    const int64_t b0 = table[t / kBlockTokens], b1 = table[t / kBlockTokens + 1];
    const uint8_t* chunks[4] = {
        w.k + b0 * kBlockBytes + head * kChunkBytes, w.k + b1 * kBlockBytes + head * kChunkBytes,
        w.v + b0 * kBlockBytes + head * kChunkBytes, w.v + b1 * kBlockBytes + head * kChunkBytes};
    uint4 x[4][8];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
#pragma unroll
      for (int i = 0; i < 8; ++i)
        x[c][i] = __ldg(reinterpret_cast<const uint4*>(chunks[c] + i * 512 + lane * 16));
    }
#pragma unroll
    for (int c = 0; c < 4; ++c) {
#pragma unroll
      for (int i = 0; i < 8; ++i) acc ^= fold(x[c][i]);
    }
  }
  if (acc == 0x9e3779b9u) *w.sink = acc;
}

}  // namespace

int run(int argc, char** argv) {
  std::vector<std::pair<int, int>> cells;
  for (int i = 1; i + 1 < argc; i += 2) cells.emplace_back(std::atoi(argv[i]), std::atoi(argv[i + 1]));
  if (cells.empty()) cells = {{1, 65536}, {1, 16384}, {16, 4096}};
  for (const auto& [batch, context] : cells) {
    if (batch < 1 || batch > 64 || context < kTile || context > 65536 || context % kTile != 0) {
      std::fprintf(stderr,
                   "usage: lathe_probe_kv_walk [BATCH CONTEXT ...] (batch 1..64, context a multiple of 32 up "
                   "to 65536)\n");
      return 2;
    }
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("no CUDA device: lathe_probe_kv_walk skipped\n");
    return 77;
  }
  cudaStream_t stream;
  PROBE_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  unsigned* sink = nullptr;
  PROBE_CHECK(cudaMalloc(&sink, 16));
  const double ceiling = lathe::bench::measure_read_ceiling(stream).best_gbs;
  std::printf("read ceiling %.0f GB/s (best of 10, 4 GiB); KV: %d heads x 128 BF16, blocks of %d, shuffled\n",
              ceiling, kKvHeads, kBlockTokens);
  std::printf("%5s %6s %9s %-10s %9s %8s %7s\n", "batch", "ctx", "MB", "walk", "us", "GB/s", "%ceil");
  int sms = 0;
  PROBE_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::mt19937_64 rng(5);
  cells.insert(cells.begin(), cells.front());  // the warm-up pass (not printed)
  for (size_t cell = 0; cell < cells.size(); ++cell) {
    const auto [batch, context] = cells[cell];
    const bool print = cell > 0;
    const int blocks_per_seq = context / kBlockTokens;
    const double bytes = static_cast<double>(batch) * blocks_per_seq * kKvHeads * kChunkBytes * 2;
    const int rotations = static_cast<int>(std::clamp(std::ceil(kRotateBytes / bytes), 1.0, 64.0));
    const int64_t case_blocks = static_cast<int64_t>(batch) * blocks_per_seq;
    const int64_t pool_blocks =
        case_blocks * rotations + 1;  // + 1: the split walk's tile may name one block past
    const size_t pool_bytes = static_cast<size_t>(pool_blocks) * kBlockBytes;
    void *k = nullptr, *v = nullptr, *table = nullptr;
    PROBE_CHECK(cudaMalloc(&k, pool_bytes));
    PROBE_CHECK(cudaMalloc(&v, pool_bytes));
    lathe::cuda::fill_random(k, pool_bytes / 2, lathe::cuda::FillKind::kBf16Unit, 21, stream);
    lathe::cuda::fill_random(v, pool_bytes / 2, lathe::cuda::FillKind::kBf16Unit, 22, stream);
    // Shuffled ids, disjoint across rotations, each sequence's table padded by one valid id (the
    // split walk reads a tile's second block even past the end of an odd-length sequence).
    std::vector<int32_t> ids(static_cast<size_t>(case_blocks * rotations));
    std::iota(ids.begin(), ids.end(), 0);
    std::shuffle(ids.begin(), ids.end(), rng);
    const int padded = blocks_per_seq + 1;
    std::vector<int32_t> tables(static_cast<size_t>(rotations) * batch * padded,
                                static_cast<int32_t>(pool_blocks - 1));
    for (int r = 0; r < rotations; ++r) {
      for (int s = 0; s < batch; ++s) {
        for (int j = 0; j < blocks_per_seq; ++j) {
          tables[(static_cast<size_t>(r) * batch + s) * padded + j] =
              ids[(static_cast<size_t>(r) * batch + s) * blocks_per_seq + j];
        }
      }
    }
    PROBE_CHECK(cudaMalloc(&table, tables.size() * 4));
    PROBE_CHECK(cudaMemcpy(table, tables.data(), tables.size() * 4, cudaMemcpyHostToDevice));
    PROBE_CHECK(cudaStreamSynchronize(stream));
    auto walk = [&](int r) {
      return Walk{static_cast<const uint8_t*>(k),
                  static_cast<const uint8_t*>(v),
                  static_cast<const int32_t*>(table) + static_cast<int64_t>(r) * batch * padded,
                  padded,
                  batch,
                  context,
                  sink};
    };
    auto report = [&](const char* name, const std::function<void(int)>& launch) {
      const double us = lathe::bench::graph_us_per_launch(stream, rotations, 9, 1, launch);
      if (!print) return;
      std::printf("%5d %6d %9.1f %-10s %9.1f %8.0f %7.1f\n", batch, context, bytes / 1e6, name, us,
                  bytes / (us * 1e3), 100.0 * bytes / (us * 1e3) / ceiling);
    };
    void* lin = nullptr;  // the linear read's own region: `rotations` disjoint copies of the cell's bytes
    PROBE_CHECK(cudaMalloc(&lin, static_cast<size_t>(bytes) * rotations));
    lathe::cuda::fill_random(lin, static_cast<size_t>(bytes) * rotations / 4, lathe::cuda::FillKind::kF32Unit,
                             23, stream);
    report("linear", [&](int r) {
      const size_t offset = static_cast<size_t>(r) * static_cast<size_t>(bytes);
      lathe::cuda::read_probe(static_cast<const uint8_t*>(lin) + offset, static_cast<size_t>(bytes), sink,
                              stream);
    });
    PROBE_CHECK(cudaFree(lin));
    report("chunks", [&](int r) { chunks_bt_kernel<kBlockTokens><<<sms * 8, 256, 0, stream>>>(walk(r)); });
    for (int slices : {1, 2, 3}) {
      const char* name = slices == 1 ? "split" : slices == 2 ? "split x2" : "split x3";
      report(name, [&](int r) {
        split_kernel<<<dim3(kKvHeads, kSplits * slices, batch), kWarps * 32, 0, stream>>>(walk(r), slices);
      });
    }
    // The same pool bytes as blocks of 32 / 64 / 128 tokens: fewer, longer chunks, shuffled alike.
    const auto bigger = [&](auto tokens_tag, const char* name) {
      constexpr int kTokens = decltype(tokens_tag)::value;
      const int per_seq = context / kTokens;
      if (per_seq * kTokens != context) return;
      std::vector<int32_t> big(static_cast<size_t>(rotations) * batch * per_seq);
      std::iota(big.begin(), big.end(), 0);
      std::shuffle(big.begin(), big.end(), rng);
      int32_t* big_table = nullptr;
      PROBE_CHECK(cudaMalloc(&big_table, big.size() * 4));
      PROBE_CHECK(cudaMemcpy(big_table, big.data(), big.size() * 4, cudaMemcpyHostToDevice));
      report(name, [&](int r) {
        Walk w = walk(r);
        w.table = big_table + static_cast<int64_t>(r) * batch * per_seq;
        w.blocks_per_seq = per_seq;
        chunks_bt_kernel<kTokens><<<sms * 8, 256, 0, stream>>>(w);
      });
      PROBE_CHECK(cudaStreamSynchronize(stream));
      PROBE_CHECK(cudaFree(big_table));
    };
    bigger(std::integral_constant<int, 32>{}, "chunks b32");
    bigger(std::integral_constant<int, 64>{}, "chunks b64");
    bigger(std::integral_constant<int, 128>{}, "chunks b128");
    PROBE_CHECK(cudaGetLastError());
    PROBE_CHECK(cudaStreamSynchronize(stream));
    PROBE_CHECK(cudaFree(k));
    PROBE_CHECK(cudaFree(v));
    PROBE_CHECK(cudaFree(table));
  }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // a failed CUDA call inside the shared ceiling measurement
    std::fprintf(stderr, "lathe_probe_kv_walk: %s\n", e.what());
    return 1;
  }
}
