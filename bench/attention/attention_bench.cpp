// lathe_bench_attention: paged decode attention on the GPU.
//
// 1. Measures the read ceiling (16-byte loads over 4 GiB, best of 10: backends/cuda/probe.h).
// 2. For (num_heads, num_kv_heads, head_dim) in {(24,4,256), (32,8,128), (64,8,128)}, batch in
//    {1,4,16,64}, context in {1k,4k,16k,64k}, KV in {BF16, FP8}: plans each policy (legacy with a
//    16-sequence reference batch; auto; pinned 1 = non-split; pinned 4 and 16; each also with GQA
//    packing armed where it changes the launch) against the
//    declared 132-SM target, runs each distinct plan once through the real dispatch
//    (ops/cuda/attention_dispatch.h), and reports the median microseconds per launch over CUDA-
//    graph replays (one warm-up, median of 9), the achieved GB/s of KV read (every K and V row of every
//    sequence once) and the percent of the ceiling. Launches inside one graph rotate over disjoint copies of
//    the KV (different blocks of one pool) until a graph reads at least 512 MB, so small cases are not timed
//    out of L2. Each row also prints a fingerprint (FNV-1a) of one launch's output bytes, so runs of two
//    builds show, cell by cell, whether a change kept the bytes, and the time of the read kernel
//    over the cell's byte count (`read_us`, `pct_read`: size_matched_read_us), the cost of the
//    launch's ramp-up and tail that no kernel of that size avoids.
//
// Usage: lathe_bench_attention [--out DIR] [--quick] [--batches LIST] [--kernels LIST] [--policies LIST]
//                              [--dtypes LIST] [--contexts LIST] [--shapes LIST] [--block-size N]
//   --quick: batch {1,16}, context {4k,16k}, BF16 only.
//   --dtypes: KV dtypes to measure, `bf16`, `fp8` or both (default both; --quick: bf16).
//   --contexts: comma list of context lengths (1..65536) instead of {1k,4k,16k,64k} (or --quick's).
//   --shapes: comma list of num_heads/num_kv_heads/head_dim labels to measure instead of the three,
//             e.g. `32/8/128` or another shape, `40/8/128` (whole query groups of at most 16 heads,
//             head dim 64, 128 or 256).
//   --batches: comma list of batch sizes (1..64) instead of {1,4,16,64} (or --quick's).
//   --kernels: comma list of split-K kernel variants to measure (backends/cuda/paged_attention.h
//              set_splitk_kernel_variant), e.g. `1,3,5`, or `serve`: at each batch, the variant a
//              serve of that width runs (ops/splitk_policy.h decode_splitk_kernel; labelled
//              e.g. serve16 / serve14). Default: `serve`, or the variant LATHE_ATTN_SPLITK_KERNEL pins.
//              Non-split plans are measured once.
//   --block-size: KV block size in tokens (a power of two, 16..1024; default the serve's, 64).
//   --tables: `shuffled` (default: every sequence's blocks at random places in the pool) or
//             `sequential` (block ids in order, so a sequence's KV is contiguous per head and
//             block): how much of a gap to a contiguous-KV peer the page placement explains.
//   --policies: comma list of the policy labels below to measure (default: all). Every label
//              runs without split slices except "auto+pack+slices": the slice cap auto gives a
//              single-sequence serve, pinned at every batch width.
//   --slices: comma list of slice caps, each a pinned count (1..8) or "auto:N" (auto's cap, at
//             most N: the attn_decode_split_slices grammar); "auto+pack+slices" is then measured
//             once per cap, labelled e.g. "auto+pack+slices3" or "auto+pack+slicesauto:2", instead
//             of at auto's cap.
//   --kv-l2-promotion: the L2 promotion of the tensor-copy geometries' K/V copies, none (the
//             default), 64, 128 or 256 bytes (the LATHE_ATTN_KV_L2_PROMOTION grammar).
//   --v-offset: bytes (a multiple of 1024, < 1 GiB) by which the V pool starts after the start of
//             its allocation (default 0): K row x and V row x then differ in their low address
//             bits, which the DRAM's channel and bank mapping may use.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "backends/cuda/chained_launch.h"
#include "backends/cuda/check.h"
#include "backends/cuda/paged_attention.h"
#include "backends/cuda/probe.h"
#include "common/device_buffer.h"
#include "common/graph_timing.h"
#include "common/l2_promotion_arg.h"
#include "common/list_arg.h"
#include "common/read_ceiling.h"
#include "core/hash.h"
#include "ops/attention_plan.h"
#include "ops/cuda/attention_dispatch.h"
#include "ops/cuda/chained_launch_lever.h"
#include "ops/kv_cache.h"
#include "ops/splitk_policy.h"
#include "target/levers.h"

namespace {

using namespace lathe;

using Buffer = bench::DeviceBuffer;

constexpr int32_t kDefaultBlockSize = ops::kDefaultKvBlockSize;  // the serve's default KV block (tokens)
constexpr size_t kRotateBytes = size_t{512} << 20;
constexpr int kMaxRotations = 64;
constexpr int kSmCount = 132;  // the h100/h200 declarations

struct Shape {
  int32_t heads, kv_heads, head_dim;
};

struct Variant {
  std::string label;
  target::SplitkPolicy policy;
  bool pack;
  // attn_decode_split_slices: 1 = off (every label without "+slices"); 0 = the cap auto gives a
  // single-sequence serve (3 for 24/4/256 and 64/8/128 on 132 SMs, 1 for 32/8/128's 72 pairs),
  // -N = that cap but at most N (auto:N), pinned at every batch width.
  int32_t slices = 1;
};

// The read kernel (probe.h) over `bytes` contiguous bytes of `pool` (a multiple of 16, <= the
// pool), CUDA-graph replayed like the cells and rotated over disjoint slices of the pool so at
// least kRotateBytes are read per graph: what one launch that only reads the cell's bytes costs,
// ramp-up and tail included. Against it a cell's time shows how much of its distance from the
// 4 GiB ceiling any single launch of that size would have. Returns 0 when the pool cannot hold
// the bytes.
double size_matched_read_us(const void* pool, size_t pool_bytes, size_t bytes, void* sink, cudaStream_t stream) {
  bytes &= ~size_t{15};
  if (bytes == 0 || bytes > pool_bytes) return 0;
  const int rotations = static_cast<int>(std::clamp<size_t>((kRotateBytes + bytes - 1) / bytes, 1,
                                                            std::min<size_t>(kMaxRotations, pool_bytes / bytes)));
  return bench::graph_us_per_launch(stream, rotations, /*replays=*/9, /*warmups=*/1, [&](int r) {
    cuda::read_probe(static_cast<const unsigned char*>(pool) + static_cast<size_t>(r) * bytes, bytes,
                     static_cast<unsigned*>(sink), stream);
  });
}

struct Row {
  std::string shape, dtype, policy, arm;
  int32_t batch, context, splits, rows_per_cta;
  std::string kernel;
  double us, gbs, pct;
  int32_t slices;
  uint64_t out_hash;
  double read_us;  // the read kernel over the cell's byte count (size_matched_read_us); 0: not measured
};

// FNV-1a over a device buffer's bytes: a fingerprint of one launch's output, so two builds (or
// two byte-equivalent kernels) can be compared cell by cell.
uint64_t device_fnv1a(const void* ptr, size_t bytes) {
  std::string host(bytes, '\0');
  LATHE_CUDA_CHECK(cudaMemcpy(host.data(), ptr, bytes, cudaMemcpyDeviceToHost));
  return lathe::fnv1a64(host);
}

// A comma list of decimal integers in 1..max appended to `out`; false (with a message naming
// `flag`) at the first entry that is not one.
bool parse_ints(const char* list, const char* flag, int max, std::vector<int32_t>& out) {
  for (const std::string& item : bench::split_list(list)) {
    const int v = std::atoi(item.c_str());
    if (v < 1 || v > max || item != std::to_string(v)) {
      std::fprintf(stderr, "error: %s: %s is not an integer in 1..%d\n", flag, item.c_str(), max);
      return false;
    }
    out.push_back(v);
  }
  return true;
}

// --shapes: a comma list of NUM_HEADS/NUM_KV_HEADS/HEAD_DIM labels (e.g. 40/8/128 for Qwen3-14B),
// the default three or any other with whole query groups of at most kMaxGroup heads and a head
// dim the decode kernels are built for (64, 128, 256); false with a message at the first that is
// not one.
bool parse_shapes(const char* list, std::vector<Shape>& out) {
  constexpr int kMaxGroup = 16;
  for (const std::string& item : bench::split_list(list)) {
    const std::vector<std::string> parts = bench::split_list_by(item, '/');
    std::vector<int32_t> v;
    for (const std::string& part : parts) {
      const int n = std::atoi(part.c_str());
      if (n >= 1 && n <= 1024 && part == std::to_string(n)) v.push_back(n);
    }
    const bool ok = v.size() == 3 && item == fmt::format("{}/{}/{}", v[0], v[1], v[2]) && v[0] % v[1] == 0 &&
                    v[0] / v[1] <= kMaxGroup && (v[2] == 64 || v[2] == 128 || v[2] == 256);
    if (!ok) {
      std::fprintf(stderr,
                   "error: --shapes: %s is not heads/kv_heads/head_dim with heads a multiple of kv_heads "
                   "(at most %d times) and head_dim 64, 128 or 256\n",
                   item.c_str(), kMaxGroup);
      return false;
    }
    out.push_back(Shape{v[0], v[1], v[2]});
  }
  return true;
}

// --slices: a comma list of slice caps, each a count in 1..kMaxSplitSlices or "auto:N"
// (target::parse_split_slices' one-cap spellings but plain "auto", which the unlisted arm is),
// appended to `out` as levers (auto:N negative); false with a message at the first that is not one.
bool parse_slice_caps(const char* list, std::vector<int32_t>& out) {
  for (const std::string& item : bench::split_list(list)) {
    const std::optional<target::SplitSlices> caps = target::parse_split_slices(item);
    const bool pinned =
        caps && caps->bf16 == caps->fp8 && caps->bf16 >= 1 && item == std::to_string(caps->bf16);
    const bool at_most = caps && caps->bf16 == caps->fp8 && item.starts_with("auto:");
    if (!pinned && !at_most) {
      std::fprintf(stderr, "error: --slices: %s is not a count in 1..%d or auto:N\n", item.c_str(),
                   target::kMaxSplitSlices);
      return false;
    }
    out.push_back(caps->bf16);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // LATHE_ATTN_SPLITK_KERNEL / _SPLIT_RULE, as a backend would read them.
  const bool variant_pinned = lathe::ops::cuda::configure_attention_kernel();
  std::string out_dir;
  bool quick = false;
  bool shuffled_tables = true;
  int32_t block_size = kDefaultBlockSize;
  int64_t v_offset = 0;
  // A split-K kernel variant, or (serve) the one a serve whose widest decode batch is the
  // measured batch would run (ops/splitk_policy.h: decode_splitk_kernel), labelled "serve" and the
  // variant number (e.g. "serve16").
  struct Kernel {
    int variant;
    bool serve = false;
    int at(int32_t batch) const {
      return serve ? ops::decode_splitk_kernel(static_cast<uint32_t>(batch)) : variant;
    }
    std::string label(int32_t batch) const { return (serve ? "serve" : "") + std::to_string(at(batch)); }
  };
  // Default: the serve's choice, or the variant LATHE_ATTN_SPLITK_KERNEL pins.
  std::vector<Kernel> kernels = {variant_pinned ? Kernel{cuda::splitk_kernel_variant()} : Kernel{0, true}};
  std::vector<std::string> policy_filter;
  std::vector<int32_t> batch_filter;
  std::vector<DType> dtype_filter;
  std::vector<int32_t> context_filter;
  std::vector<int32_t> slice_caps;
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--dtypes") && i + 1 < argc) {
      for (const std::string& d : bench::split_list(argv[++i])) {
        if (d != "bf16" && d != "fp8") {
          std::fprintf(stderr, "error: --dtypes: %s is not bf16 or fp8\n", d.c_str());
          return 2;
        }
        dtype_filter.push_back(d == "bf16" ? DType::kBF16 : DType::kF8E4M3);
      }
    }
    if (!std::strcmp(argv[i], "--batches") && i + 1 < argc && !parse_ints(argv[++i], "--batches", 64, batch_filter)) {
      return 2;
    }
    if (!std::strcmp(argv[i], "--contexts") && i + 1 < argc &&
        !parse_ints(argv[++i], "--contexts", 65536, context_filter)) {
      return 2;
    }
    if (!std::strcmp(argv[i], "--slices") && i + 1 < argc && !parse_slice_caps(argv[++i], slice_caps)) {
      return 2;
    }
    if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc && !parse_shapes(argv[++i], shapes)) return 2;
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc) out_dir = argv[++i];
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    if (!std::strcmp(argv[i], "--block-size") && i + 1 < argc) {
      const int value = std::atoi(argv[++i]);
      if (value < 16 || value > 1024 || (value & (value - 1)) != 0) {
        std::fprintf(stderr, "error: --block-size: %s is not a power of two in 16..1024\n", argv[i]);
        return 2;
      }
      block_size = value;
    }
    if (!std::strcmp(argv[i], "--v-offset") && i + 1 < argc) {
      const long long value = std::atoll(argv[++i]);
      if (value < 0 || value >= (1ll << 30) || value % 1024 != 0) {
        std::fprintf(stderr, "error: --v-offset: %s is not a multiple of 1024 in [0, 1 GiB)\n", argv[i]);
        return 2;
      }
      v_offset = value;
    }
    if (!std::strcmp(argv[i], "--tables") && i + 1 < argc) {
      const std::string tables = argv[++i];
      if (tables != "shuffled" && tables != "sequential") {
        std::fprintf(stderr, "error: --tables: %s is not shuffled or sequential\n", tables.c_str());
        return 2;
      }
      shuffled_tables = tables == "shuffled";
    }
    if (!std::strcmp(argv[i], "--kv-l2-promotion") && i + 1 < argc) {
      if (!bench::apply_l2_promotion_arg(argv[i], argv[i + 1], cuda::set_splitk_kv_l2_promotion,
                                         "K/V copies"))
        return 2;
      ++i;
    }
    if (!std::strcmp(argv[i], "--policies") && i + 1 < argc) policy_filter = bench::split_list(argv[++i]);
    if (!std::strcmp(argv[i], "--kernels") && i + 1 < argc) {
      kernels.clear();
      for (const std::string& k : bench::split_list(argv[++i])) {
        if (k == "serve") {
          kernels.push_back({0, true});
          continue;
        }
        const int v = std::atoi(k.c_str());
        if (v < 0 || v >= cuda::kSplitkKernelVariants || k != std::to_string(v)) {
          std::fprintf(stderr, "error: --kernels: no split-K kernel variant %s\n", k.c_str());
          return 2;
        }
        kernels.push_back({v});
      }
    }
  }
  try {
    cudaDeviceProp prop{};
    LATHE_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    // As a backend on this device launches: chained (PDL) from sm_90 unless LATHE_CHAINED_LAUNCH
    // is off, with the K/V tiles before the wait unless LATHE_ATTN_EARLY_KV is off.
    lathe::ops::cuda::configure_chained_launch(prop.major);
    lathe::ops::cuda::configure_attention_early_kv();
    cudaStream_t stream;
    LATHE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const double ceiling = bench::measure_read_ceiling(stream).best_gbs;
    std::string log = fmt::format(
        "device: {} ({} SMs, L2 {} MB)\nread ceiling: {:.0f} GB/s (best of 10, 4 GiB)\nblock tables: {}\n"
        "chained launches: {}\nKV block size: {} tokens\nV offset: {} bytes\n",
        prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, ceiling,
        shuffled_tables ? "shuffled" : "sequential", cuda::chained_launch_enabled() ? "on" : "off",
        block_size, v_offset);
    std::fputs(log.c_str(), stdout);
    std::fflush(stdout);

    if (shapes.empty()) shapes = {Shape{24, 4, 256}, Shape{32, 8, 128}, Shape{64, 8, 128}};
    const std::vector<int32_t> batches = !batch_filter.empty() ? batch_filter
                                         : quick                ? std::vector<int32_t>{1, 16}
                                                                : std::vector<int32_t>{1, 4, 16, 64};
    const std::vector<int32_t> contexts = !context_filter.empty() ? context_filter
                                          : quick                  ? std::vector<int32_t>{4096, 16384}
                                                                   : std::vector<int32_t>{1024, 4096, 16384, 65536};
    const std::vector<DType> dtypes = !dtype_filter.empty() ? dtype_filter
                                      : quick                ? std::vector<DType>{DType::kBF16}
                                                             : std::vector<DType>{DType::kBF16, DType::kF8E4M3};
    std::vector<Variant> variants;
    for (const Variant& v : {Variant{"legacy", target::SplitkPolicy::legacy(), false},
                             Variant{"auto", target::SplitkPolicy::automatic(), false},
                             Variant{"auto+pack", target::SplitkPolicy::automatic(), true},
                             Variant{"auto+pack+slices", target::SplitkPolicy::automatic(), true, 0},
                             Variant{"pinned1", target::SplitkPolicy::pinned_to(1), false},
                             Variant{"pinned1+pack", target::SplitkPolicy::pinned_to(1), true},
                             Variant{"pinned4+pack", target::SplitkPolicy::pinned_to(4), true},
                             Variant{"pinned16+pack", target::SplitkPolicy::pinned_to(16), true}}) {
      if (!policy_filter.empty() &&
          std::find(policy_filter.begin(), policy_filter.end(), v.label) == policy_filter.end()) {
        continue;
      }
      if (v.slices != 0 || slice_caps.empty()) {
        variants.push_back(v);
        continue;
      }
      for (int32_t cap : slice_caps) {
        Variant pinned = v;
        pinned.label += target::split_slices_label(cap);
        pinned.slices = cap;
        variants.push_back(pinned);
      }
    }

    // One pool big enough for the largest case: every K and V row of 64 x 64k tokens at 4 KB per
    // token (BF16, 8 x 128 or 4 x 256), as blocks; smaller cases rotate over disjoint block sets.
    const int64_t pool_tokens = int64_t{64} * 65536;
    const int64_t pool_blocks = pool_tokens / block_size;
    const size_t pool_bytes_each = static_cast<size_t>(pool_tokens) * 1024 * 2;  // K or V: 1024 elems x 2 B
    Buffer k_pool(pool_bytes_each), v_pool(pool_bytes_each + static_cast<size_t>(v_offset)), sink(16);
    void* const v_base = static_cast<char*>(v_pool.ptr) + v_offset;
    const int64_t max_rows = 64;
    Buffer q(static_cast<size_t>(max_rows) * 64 * 128 * 2), out(static_cast<size_t>(max_rows) * 64 * 128 * 2);
    cuda::fill_random(q.ptr, max_rows * 64 * 128, cuda::FillKind::kBf16Unit, 11, stream);
    std::mt19937_64 rng(5);
    std::vector<Row> rows;

    for (DType dtype : dtypes) {
      const bool fp8 = dtype == DType::kF8E4M3;
      const size_t elem = fp8 ? 1 : 2;
      const size_t pool_elems = pool_bytes_each / elem;
      cuda::fill_random(k_pool.ptr, pool_elems, fp8 ? cuda::FillKind::kFp8E4M3 : cuda::FillKind::kBf16Unit, 21, stream);
      cuda::fill_random(v_base, pool_elems, fp8 ? cuda::FillKind::kFp8E4M3 : cuda::FillKind::kBf16Unit, 22,
                        stream);
      for (const Shape& shape : shapes) {
        const int64_t token_elems = static_cast<int64_t>(shape.kv_heads) * shape.head_dim;
        const int32_t blocks_in_pool = static_cast<int32_t>(std::min<int64_t>(pool_blocks, pool_elems / (token_elems * block_size)));
        for (int32_t batch : batches) {
          for (int32_t context : contexts) {
            const int32_t blocks_per_seq = (context + block_size - 1) / block_size;
            const int64_t case_blocks = static_cast<int64_t>(batch) * blocks_per_seq;
            const double kv_bytes = static_cast<double>(batch) * context * token_elems * elem * 2;
            int rotations = static_cast<int>(std::clamp<double>(std::ceil(kRotateBytes / kv_bytes), 1, kMaxRotations));
            rotations = static_cast<int>(std::min<int64_t>(rotations, blocks_in_pool / case_blocks));
            if (rotations < 1) {
              std::printf("skip %d/%d/%d batch %d context %d: pool too small\n", shape.heads, shape.kv_heads,
                          shape.head_dim, batch, context);
              continue;
            }
            // Shuffled block ids, disjoint across rotations; tables [rotation][seq][block].
            std::vector<int32_t> ids(static_cast<size_t>(case_blocks) * rotations);
            std::iota(ids.begin(), ids.end(), 0);
            if (shuffled_tables) std::shuffle(ids.begin(), ids.end(), rng);
            Buffer tables(ids.size() * 4);
            LATHE_CUDA_CHECK(cudaMemcpy(tables.ptr, ids.data(), ids.size() * 4, cudaMemcpyHostToDevice));
            std::vector<int32_t> meta(static_cast<size_t>(2 * batch + 1));
            for (int32_t s = 0; s <= batch; ++s) meta[s] = s;               // query_start
            for (int32_t s = 0; s < batch; ++s) meta[batch + 1 + s] = context;  // context_lens
            Buffer meta_dev(meta.size() * 4);
            LATHE_CUDA_CHECK(cudaMemcpy(meta_dev.ptr, meta.data(), meta.size() * 4, cudaMemcpyHostToDevice));

            ops::AttentionShape attn{shape.heads, shape.kv_heads, shape.head_dim, 1.0f / std::sqrt(float(shape.head_dim))};
            ops::KvCacheShape cache{blocks_in_pool, block_size, shape.kv_heads, shape.head_dim, dtype};
            ops::KvCacheLayer layer{k_pool.ptr, v_base, 0.05f, 0.05f};
            const int64_t cols = static_cast<int64_t>(shape.heads) * shape.head_dim;
            const ops::Act q_act{q.ptr, DType::kBF16, batch, cols, cols};
            const ops::Act out_act{out.ptr, DType::kBF16, batch, cols, cols};

            const double read_us = size_matched_read_us(k_pool.ptr, pool_bytes_each, static_cast<size_t>(kv_bytes),
                                                        sink.ptr, stream);
            // (arm, splits, slices, heads per CTA, kernel label) -> (us, output fingerprint)
            std::map<std::tuple<int, int, int, int, std::string>, std::pair<double, uint64_t>> measured;
            for (const Kernel& kernel : kernels) {
            LATHE_CUDA_CHECK(cuda::set_splitk_kernel_variant(kernel.at(batch)) ? cudaSuccess : cudaErrorInvalidValue);
            for (const Variant& variant : variants) {
              ops::AttentionConfig config;
              config.levers.attn_decode_splitk = {variant.policy, false};
              config.levers.attn_decode_gqa_pack = {variant.pack, false};
              config.sm_count = kSmCount;
              config.max_decode_seqs = 16;  // the legacy reference batch; the pool bounds the rest
              int32_t slices = variant.slices;
              if (slices <= 0) {  // auto's cap (at most N for auto:N) for a single-sequence serve
                config.levers.attn_decode_split_slices = {1, false};
                const int32_t splits = ops::plan_attention(ops::Phase::kDecode, batch, attn, cache, config).num_splits;
                slices = static_cast<int32_t>(ops::decode_split_slices(slices, variant.policy, kSmCount,
                                                                       static_cast<uint32_t>(shape.kv_heads),
                                                                       static_cast<uint32_t>(splits), 1));
              }
              config.levers.attn_decode_split_slices = {slices, false};
              const ops::AttentionPlan plan = ops::plan_attention(ops::Phase::kDecode, batch, attn, cache, config);
              const bool split = plan.arm == ops::AttentionArm::kDecodeSplitK;
              if (!split && &kernel != &kernels.front()) continue;  // non-split: measured once
              const auto key = std::make_tuple(static_cast<int>(plan.arm), plan.num_splits, plan.split_slices,
                                               plan.gqa_group, split ? kernel.label(batch) : std::string("-"));
              // One launch of this cell through the dispatch, reading the given block tables.
              auto launch = [&](const int32_t* table_base, void* workspace_ptr) {
                ops::DeviceBatch db;
                db.phase = ops::Phase::kDecode;
                db.num_tokens = db.num_seqs = batch;
                db.max_blocks_per_seq = blocks_per_seq;
                db.max_query_len = 1;
                db.max_context_len = context;
                db.query_start = static_cast<const int32_t*>(meta_dev.ptr);
                db.context_lens = static_cast<const int32_t*>(meta_dev.ptr) + batch + 1;
                db.block_tables = table_base;
                ops::cuda::attention_forward(db, q_act, attn, cache, layer, out_act, workspace_ptr, plan.workspace_bytes,
                                             config, stream);
              };
              if (!measured.count(key)) {
                Buffer workspace(plan.workspace_bytes);
                // One eager launch first: per-kernel one-time setup stays out of the capture.
                launch(static_cast<const int32_t*>(tables.ptr), workspace.ptr);
                LATHE_CUDA_CHECK(cudaStreamSynchronize(stream));
                // Replays: one warm-up, then the median of 9.
                const double timed =
                    bench::graph_us_per_launch(stream, rotations, /*replays=*/9, /*warmups=*/1, [&](int r) {
                      launch(static_cast<const int32_t*>(tables.ptr) + static_cast<int64_t>(r) * case_blocks,
                             workspace.ptr);
                    });
                // The fingerprint of the first rotation's output, from one more eager launch.
                launch(static_cast<const int32_t*>(tables.ptr), workspace.ptr);
                LATHE_CUDA_CHECK(cudaStreamSynchronize(stream));
                measured[key] = {timed, device_fnv1a(out.ptr, static_cast<size_t>(batch) * cols * 2)};
              }
              const double us = measured[key].first;
              const double gbs = kv_bytes / (us * 1e-6) / 1e9;
              Row row{fmt::format("{}/{}/{}", shape.heads, shape.kv_heads, shape.head_dim), fp8 ? "fp8" : "bf16",
                      variant.label, ops::attention_arm_name(plan.arm), batch, context, plan.num_splits,
                      plan.gqa_group, split ? kernel.label(batch) : std::string("-"), us, gbs,
                      100.0 * gbs / ceiling, plan.split_slices, measured[key].second, read_us};
              std::printf(
                  "%-10s %-4s B%-3d L%-6d %-16s %-18s splits %-2d slices %d rows %-2d k%-3s %9.1f us %6.0f GB/s "
                  "%5.1f%%  read %7.1f us  out %016llx\n",
                  row.shape.c_str(), row.dtype.c_str(), batch, context, row.policy.c_str(), row.arm.c_str(), row.splits,
                  row.slices, plan.gqa_group, row.kernel.c_str(), us, gbs, row.pct, read_us,
                  static_cast<unsigned long long>(row.out_hash));
              std::fflush(stdout);
              rows.push_back(row);
            }
            }
          }
        }
      }
    }
    if (!out_dir.empty()) {
      std::ofstream csv(out_dir + "/attention_bench.csv");
      for (size_t from = 0; from < log.size();) {  // the header lines, each as a comment
        const size_t to = log.find('\n', from);
        csv << "# " << log.substr(from, to - from) << "\n";
        from = to == std::string::npos ? log.size() : to + 1;
      }
      csv << "shape,kv,batch,context,policy,arm,splits,rows_per_cta,kernel,us,gbs,pct_ceiling,slices,"
             "out_fnv,read_us,pct_read\n";
      for (const Row& r : rows) {
        // pct_read: the read kernel's time over the cell's (100 = as fast as a launch that only
        // reads the same bytes); empty where the pool could not hold them.
        const std::string read = r.read_us > 0 ? fmt::format("{:.2f},{:.1f}", r.read_us, 100.0 * r.read_us / r.us) : ",";
        csv << fmt::format("{},{},{},{},{},{},{},{},{},{:.2f},{:.1f},{:.2f},{},{:016x},{}\n", r.shape, r.dtype,
                           r.batch, r.context, r.policy, r.arm, r.splits, r.rows_per_cta, r.kernel, r.us,
                           r.gbs, r.pct, r.slices, r.out_hash, read);
      }
    }
    cudaStreamDestroy(stream);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
  return 0;
}
