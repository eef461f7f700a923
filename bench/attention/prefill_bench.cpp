// lathe_bench_prefill_attention: paged prefill attention (causal, whole prompts) on the GPU.
//
// 1. Measures the tensor-core reference in the same process: cuBLASLt BF16 on a square 8192^3
//    product (backends/cuda/gemm_lt.h, the library lathe's prefill linears call), best of 10.
// 2. For (num_heads, num_kv_heads, head_dim) in {(32,8,128) Qwen3-8B, (64,8,128) Qwen3-32B,
//    (24,4,256) the Qwen3.5-27B class}, (batch x prompt) in {16 x 1024, 4 x 4096, 1 x 16384} and KV in
//    {BF16, FP8 E4M3}, and each prefill kernel the GPU has for the head dim (`ws`, the
//    warp-specialised warpgroup-MMA kernel of sm_90a at head dim 128; `mma`, the mma.sync kernel,
//    everywhere): one launch over whole prompts (row i sees positions 0..i), KV in 64-token blocks
//    (or --block-size) at shuffled places of the pool, as a serve lays them out. Median
//    microseconds per launch over CUDA-graph replays (two launches a graph, one warm-up, median of
//    9), the causal FLOPs done per second (4 * head_dim * num_heads per (row, visible position):
//    q.k and p.v, 2 FLOPs per multiply-add) and the percent of the reference, and an FNV-1a
//    fingerprint of the launch's output bytes, so runs of two builds show cell by cell whether a
//    change kept the bytes.
//
// The peer, PyTorch SDPA on contiguous BF16 tensors, is tools/peers/sdpa_prefill.py (same cells).
//
// Usage: lathe_bench_prefill_attention [--out DIR] [--shapes LIST] [--dtypes LIST] [--cells LIST]
//                                      [--kernels LIST] [--block-size N] [--kv-l2-promotion B]
//   --shapes: num_heads/num_kv_heads/head_dim labels to keep, e.g. `32/8/128`.
//   --dtypes: `bf16`, `fp8` or both (default both).
//   --cells: BATCHxPROMPT entries instead of the default three, e.g. `8x2048,1x32768`.
//   --kernels: `ws`, `mma` or both (default both; `ws` only where the GPU and build have it).
//   --block-size: KV block size in tokens, a multiple of 16 in 16..1024 (default the serve's, 64).
//   --kv-l2-promotion: the L2 promotion of the ws kernel's K/V copies, none, 64, 128 or 256 bytes
//             (default 256; cuda::set_prefill_kv_l2_promotion).
//   --out: also write DIR/prefill_attention.csv.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/gemm_lt.h"
#include "backends/cuda/paged_attention.h"
#include "backends/cuda/probe.h"
#include "common/device_buffer.h"
#include "common/graph_timing.h"
#include "common/l2_promotion_arg.h"
#include "common/list_arg.h"
#include "core/hash.h"
#include "ops/kv_cache.h"

namespace {

using namespace lathe;

using Buffer = bench::DeviceBuffer;

constexpr int32_t kDefaultBlockSize = ops::kDefaultKvBlockSize;  // the serve's default KV block (tokens)
constexpr int64_t kGemmSide = 8192;

struct Shape {
  int32_t heads, kv_heads, head_dim;
  std::string label() const { return fmt::format("{}/{}/{}", heads, kv_heads, head_dim); }
};

struct Cell {
  int32_t batch, prompt;
};

// Best FLOP/s of cuBLASLt BF16 on kGemmSide^3 over `runs` timed products after one warm-up.
double gemm_reference_flops(cudaStream_t stream, int runs) {
  const auto n = static_cast<size_t>(kGemmSide);
  constexpr size_t kWorkspace = size_t{32} << 20;
  Buffer w(n * n * 2), x(n * n * 2), y(n * n * 2), workspace(kWorkspace);
  cuda::fill_random(w.ptr, n * n, cuda::FillKind::kBf16Unit, 11, stream);
  cuda::fill_random(x.ptr, n * n, cuda::FillKind::kBf16Unit, 12, stream);
  cuda::LtGemm lt(workspace.ptr, kWorkspace, kGemmSide);
  const cuda::LtOperands ops{w.ptr, x.ptr, kGemmSide, y.ptr, kGemmSide, false};
  return cuda::lt_best_flops(lt, cuda::LtKind::kBf16, kGemmSide, kGemmSide, kGemmSide, ops, runs, stream);
}

// Causal FLOPs of whole prompts: row i of a prompt sees i + 1 positions, 4 * head_dim FLOPs each
// per query head (2 for q.k, 2 for p.v).
double causal_flops(const Shape& s, const Cell& c) {
  const double pairs = static_cast<double>(c.prompt) * (c.prompt + 1) / 2.0;
  return 4.0 * s.head_dim * s.heads * pairs * c.batch;
}

struct Result {
  double us = 0.0;
  uint64_t out_hash = 0;
};

Result measure(const Shape& s, const Cell& c, cuda::KvDType dtype, int32_t block_size, cudaStream_t stream) {
  const int32_t blocks_per_seq = (c.prompt + block_size - 1) / block_size;
  const int32_t num_blocks = blocks_per_seq * c.batch;
  const size_t kv_elems = static_cast<size_t>(num_blocks) * s.kv_heads * block_size * s.head_dim;
  const size_t kv_bytes = kv_elems * (dtype == cuda::KvDType::kBF16 ? 2 : 1);
  const int64_t tokens = static_cast<int64_t>(c.batch) * c.prompt;
  const int64_t row = static_cast<int64_t>(s.heads) * s.head_dim;
  Buffer k(kv_bytes), v(kv_bytes), q(static_cast<size_t>(tokens * row) * 2),
      out(static_cast<size_t>(tokens * row) * 2);
  const cuda::FillKind kv_fill =
      dtype == cuda::KvDType::kBF16 ? cuda::FillKind::kBf16Unit : cuda::FillKind::kFp8E4M3;
  cuda::fill_random(k.ptr, kv_elems, kv_fill, 21, stream);
  cuda::fill_random(v.ptr, kv_elems, kv_fill, 22, stream);
  cuda::fill_random(q.ptr, static_cast<size_t>(tokens * row), cuda::FillKind::kBf16Unit, 23, stream);

  // Every sequence's blocks at shuffled places of the pool.
  std::vector<int32_t> blocks(static_cast<size_t>(num_blocks));
  std::iota(blocks.begin(), blocks.end(), 0);
  std::mt19937 rng(7);
  std::shuffle(blocks.begin(), blocks.end(), rng);
  std::vector<int32_t> context(static_cast<size_t>(c.batch), c.prompt),
      starts(static_cast<size_t>(c.batch) + 1);
  for (int32_t i = 0; i <= c.batch; ++i) starts[static_cast<size_t>(i)] = i * c.prompt;
  Buffer d_tables(blocks.size() * 4), d_context(context.size() * 4), d_starts(starts.size() * 4);
  LATHE_CUDA_CHECK(cudaMemcpy(d_tables.ptr, blocks.data(), blocks.size() * 4, cudaMemcpyHostToDevice));
  LATHE_CUDA_CHECK(cudaMemcpy(d_context.ptr, context.data(), context.size() * 4, cudaMemcpyHostToDevice));
  LATHE_CUDA_CHECK(cudaMemcpy(d_starts.ptr, starts.data(), starts.size() * 4, cudaMemcpyHostToDevice));

  cuda::AttentionRows rows;
  rows.q = q.ptr;
  rows.q_stride = row;
  rows.out = out.ptr;
  rows.out_stride = row;
  rows.num_heads = s.heads;
  rows.num_seqs = c.batch;
  rows.scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  cuda::PagedKv kv;
  kv.k = k.ptr;
  kv.v = v.ptr;
  kv.dtype = dtype;
  // Random E4M3 codes span +-448: scales that keep the scores in a softmax's usual range.
  kv.k_scale = dtype == cuda::KvDType::kBF16 ? 1.0f : 1.0f / 64.0f;
  kv.v_scale = kv.k_scale;
  kv.num_kv_heads = s.kv_heads;
  kv.block_size = block_size;
  kv.head_dim = s.head_dim;
  kv.block_tables = static_cast<const int32_t*>(d_tables.ptr);
  kv.max_blocks_per_seq = blocks_per_seq;
  kv.context_lens = static_cast<const int32_t*>(d_context.ptr);
  kv.num_blocks = num_blocks;
  const auto launch = [&](int) {
    LATHE_CUDA_CHECK(
        cuda::launch_paged_prefill(rows, kv, static_cast<const int32_t*>(d_starts.ptr), c.prompt, stream));
  };
  launch(0);
  LATHE_CUDA_CHECK(cudaStreamSynchronize(stream));
  Result r;
  std::string host(static_cast<size_t>(tokens * row) * 2, '\0');
  LATHE_CUDA_CHECK(cudaMemcpy(host.data(), out.ptr, host.size(), cudaMemcpyDeviceToHost));
  r.out_hash = fnv1a64(host);
  r.us = bench::graph_us_per_launch(stream, /*per_graph=*/2, /*replays=*/9, /*warmups=*/1, launch);
  return r;
}

bool parse_cells(const char* list, std::vector<Cell>& out) {
  for (const std::string& item : bench::split_list(list)) {
    Cell c{};
    char tail = 0;
    if (std::sscanf(item.c_str(), "%dx%d%c", &c.batch, &c.prompt, &tail) != 2 || c.batch < 1 ||
        c.batch > 256 || c.prompt < 1 || c.prompt > 131072) {
      std::fprintf(stderr, "error: --cells: '%s' is not BATCHxPROMPT (batch 1..256, prompt 1..131072)\n",
                   item.c_str());
      return false;
    }
    out.push_back(c);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir;
  std::vector<std::string> shape_filter;
  std::vector<cuda::KvDType> dtypes;
  std::vector<Cell> cells;
  std::vector<std::string> kernels = {"ws", "mma"};
  int32_t block_size = kDefaultBlockSize;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--out") && has_value) {
      out_dir = argv[++i];
    } else if (!std::strcmp(argv[i], "--shapes") && has_value) {
      shape_filter = bench::split_list(argv[++i]);
    } else if (!std::strcmp(argv[i], "--dtypes") && has_value) {
      for (const std::string& d : bench::split_list(argv[++i])) {
        if (d != "bf16" && d != "fp8") {
          std::fprintf(stderr, "error: --dtypes: %s is not bf16 or fp8\n", d.c_str());
          return 2;
        }
        dtypes.push_back(d == "bf16" ? cuda::KvDType::kBF16 : cuda::KvDType::kFP8E4M3);
      }
    } else if (!std::strcmp(argv[i], "--kernels") && has_value) {
      kernels = bench::split_list(argv[++i]);
      for (const std::string& k : kernels) {
        if (k != "ws" && k != "mma") {
          std::fprintf(stderr, "error: --kernels: %s is not ws or mma\n", k.c_str());
          return 2;
        }
      }
    } else if (!std::strcmp(argv[i], "--kv-l2-promotion") && has_value) {
      if (!bench::apply_l2_promotion_arg(argv[i], argv[i + 1], cuda::set_prefill_kv_l2_promotion,
                                         "K/V copies (ws kernel)"))
        return 2;
      ++i;
    } else if (!std::strcmp(argv[i], "--cells") && has_value) {
      if (!parse_cells(argv[++i], cells)) return 2;
    } else if (!std::strcmp(argv[i], "--block-size") && has_value) {
      char tail = 0;
      if (std::sscanf(argv[++i], "%d%c", &block_size, &tail) != 1 || block_size < 16 || block_size > 1024 ||
          block_size % 16 != 0) {
        std::fprintf(stderr, "error: --block-size: %s is not a multiple of 16 in 16..1024\n", argv[i]);
        return 2;
      }
    } else {
      std::fprintf(
          stderr,
          "usage: %s [--out DIR] [--shapes LIST] [--dtypes bf16,fp8] [--cells BxL,...] [--kernels ws,mma] "
          "[--block-size N] [--kv-l2-promotion none|64|128|256]\n",
          argv[0]);
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no CUDA device: nothing to measure\n");
    return 77;
  }
  if (dtypes.empty()) dtypes = {cuda::KvDType::kBF16, cuda::KvDType::kFP8E4M3};
  if (cells.empty()) cells = {{16, 1024}, {4, 4096}, {1, 16384}};
  std::vector<Shape> shapes;
  for (const Shape& s : {Shape{32, 8, 128}, Shape{64, 8, 128}, Shape{24, 4, 256}}) {
    if (shape_filter.empty() || std::count(shape_filter.begin(), shape_filter.end(), s.label()) > 0) {
      shapes.push_back(s);
    }
  }

  cudaStream_t stream = nullptr;
  LATHE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const double reference = gemm_reference_flops(stream, 10);
  std::printf("reference: cuBLASLt BF16 %lld^3, best of 10: %.1f TFLOP/s; KV block size %d\n",
              static_cast<long long>(kGemmSide), reference / 1e12, block_size);
  std::printf("%-10s %-5s %-4s %6s %7s %10s %9s %9s %16s\n", "shape", "kv", "kern", "batch", "prompt", "us",
              "TFLOP/s", "of_ref", "out_fnv1a");
  std::string csv =
      "shape,kv,kernel,block_size,batch,prompt,us,tflops,pct_reference,reference_tflops,out_fnv1a\n";
  for (const Shape& s : shapes) {
    for (cuda::KvDType dtype : dtypes) {
      for (const Cell& c : cells) {
        for (const std::string& kernel : kernels) {
          const bool ws = kernel == "ws";
          if (ws && !cuda::prefill_uses_wgmma(s.head_dim)) continue;  // not on this GPU / head dim
          cuda::set_prefill_wgmma(ws);
          const Result r = measure(s, c, dtype, block_size, stream);
          cuda::set_prefill_wgmma(true);
          const double flops = causal_flops(s, c) / (r.us * 1e-6);
          const char* kv = dtype == cuda::KvDType::kBF16 ? "bf16" : "fp8";
          std::printf("%-10s %-5s %-4s %6d %7d %10.1f %9.1f %8.1f%% %016llx\n", s.label().c_str(), kv,
                      kernel.c_str(), c.batch, c.prompt, r.us, flops / 1e12, 100.0 * flops / reference,
                      static_cast<unsigned long long>(r.out_hash));
          std::fflush(stdout);
          csv += fmt::format("{},{},{},{},{},{},{:.2f},{:.2f},{:.2f},{:.2f},{:016x}\n", s.label(), kv, kernel,
                             block_size, c.batch, c.prompt, r.us, flops / 1e12, 100.0 * flops / reference,
                             reference / 1e12, r.out_hash);
        }
      }
    }
  }
  cudaStreamDestroy(stream);
  if (!out_dir.empty()) {
    std::ofstream file(out_dir + "/prefill_attention.csv");
    file << csv;
    if (!file) {
      std::fprintf(stderr, "error: cannot write %s/prefill_attention.csv\n", out_dir.c_str());
      return 1;
    }
  }
  return 0;
}
