// Paged KV cache writes and causal paged attention (prefill chunks and decode rows mixed).
//
// Attention runs one task per (sequence, KV head): the sequence's cached K and V of that head
// are decoded once into f32 [context, head_dim] scratch, then every query head of the GQA group
// and every query row of the chunk reads them. Each output row depends only on its own query,
// its own sequence's cache and the fixed index order of the loops.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/cpu_ops.h"
#include "backends/cpu/internal.h"
#include "core/error.h"
#include "core/numeric.h"
#include "core/parallel.h"

namespace lathe::cpu {
namespace {

void check_cache(const char* op, const PagedKv& cache) {
  if (cache.num_blocks < 0 || cache.block_size <= 0 || cache.num_kv_heads <= 0 || cache.head_dim <= 0) {
    fail("cpu {}: KV cache shape [blocks {}, kv_heads {}, block_size {}, head_dim {}] is invalid", op,
         cache.num_blocks, cache.num_kv_heads, cache.block_size, cache.head_dim);
  }
  if (!is_activation_dtype(cache.dtype) && cache.dtype != DType::kF8E4M3) {
    fail("cpu {}: KV cache dtype {} is not supported (F32, BF16, F16, F8_E4M3)", op, dtype_name(cache.dtype));
  }
  if (cache.dtype == DType::kF8E4M3 && !(cache.k_scale > 0.0f && cache.v_scale > 0.0f)) {
    fail("cpu {}: FP8 KV cache scales must be positive (k_scale {}, v_scale {})", op, cache.k_scale, cache.v_scale);
  }
  if (cache.num_blocks > 0 && (cache.k == nullptr || cache.v == nullptr)) fail("cpu {}: KV cache has no data", op);
}

// Writes n values into cache storage at element offset `offset`.
void store_cache(const float* src, int64_t n, void* base, DType dtype, int64_t offset, float scale) {
  if (dtype == DType::kF8E4M3) {
    uint8_t* dst = static_cast<uint8_t*>(base) + offset;
    for (int64_t i = 0; i < n; ++i) dst[i] = float_to_fp8_e4m3(src[i] / scale);
    return;
  }
  store_row(src, n, static_cast<char*>(base) + offset * static_cast<int64_t>(dtype_size(dtype)), dtype);
}

// Reads n values from cache storage at element offset `offset` as f32.
void load_cache(const void* base, DType dtype, int64_t offset, float scale, int64_t n, float* dst) {
  if (dtype == DType::kF8E4M3) {
    const float* table = fp8_e4m3_table();
    const uint8_t* src = static_cast<const uint8_t*>(base) + offset;
    for (int64_t i = 0; i < n; ++i) dst[i] = table[src[i]] * scale;
    return;
  }
  load_row(static_cast<const char*>(base) + offset * static_cast<int64_t>(dtype_size(dtype)), dtype, n, dst);
}

inline int64_t cache_offset(const PagedKv& cache, int64_t block, int64_t head, int64_t slot) {
  return ((block * cache.num_kv_heads + head) * cache.block_size + slot) * cache.head_dim;
}

}  // namespace

void kv_write(Rows k, Rows v, int64_t tokens, const int32_t* slot_mapping, const PagedKv& cache) {
  check_cache("kv_write", cache);
  const int64_t hd = cache.head_dim;
  const int64_t cols = cache.num_kv_heads * hd;
  detail::check_rows("kv_write", "k", k, tokens, cols);
  detail::check_rows("kv_write", "v", v, tokens, cols);
  const int64_t num_slots = static_cast<int64_t>(cache.num_blocks) * cache.block_size;
  for (int64_t t = 0; t < tokens; ++t) {
    if (slot_mapping[t] >= num_slots) {
      fail("cpu kv_write: slot {} of row {} outside the cache ({} blocks of {})", slot_mapping[t], t,
           cache.num_blocks, cache.block_size);
    }
  }
  parallel_for(
      tokens,
      [&](int64_t begin, int64_t end) {
        std::vector<float> buf(static_cast<size_t>(cols));
        for (int64_t t = begin; t < end; ++t) {
          const int64_t slot = slot_mapping[t];
          if (slot < 0) continue;
          const int64_t block = slot / cache.block_size;
          const int64_t offset = slot % cache.block_size;
          load_row(detail::row_ptr(k, t), k.dtype, cols, buf.data());
          for (int64_t h = 0; h < cache.num_kv_heads; ++h) {
            store_cache(buf.data() + h * hd, hd, cache.k, cache.dtype, cache_offset(cache, block, h, offset),
                        cache.k_scale);
          }
          load_row(detail::row_ptr(v, t), v.dtype, cols, buf.data());
          for (int64_t h = 0; h < cache.num_kv_heads; ++h) {
            store_cache(buf.data() + h * hd, hd, cache.v, cache.dtype, cache_offset(cache, block, h, offset),
                        cache.v_scale);
          }
        }
      },
      detail::rows_per_task(cols * 8));
}

float abs_max(Rows x, int64_t rows, int64_t cols) {
  detail::check_rows("abs_max", "x", x, rows, cols);
  std::vector<uint32_t> row_max(static_cast<size_t>(std::max<int64_t>(rows, 0)), 0u);
  parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        std::vector<float> buf(static_cast<size_t>(cols));
        for (int64_t r = begin; r < end; ++r) {
          load_row(detail::row_ptr(x, r), x.dtype, cols, buf.data());
          uint32_t m = 0;
          for (int64_t c = 0; c < cols; ++c) {
            m = std::max(m, std::bit_cast<uint32_t>(buf[static_cast<size_t>(c)]) & 0x7fffffffu);
          }
          row_max[static_cast<size_t>(r)] = m;
        }
      },
      detail::rows_per_task(cols));
  uint32_t m = 0;
  for (uint32_t r : row_max) m = std::max(m, r);
  return std::bit_cast<float>(m);
}

void paged_attention(Rows q, Rows out, int32_t num_seqs, const int32_t* query_start, const int32_t* context_lens,
                     const int32_t* block_tables, int32_t max_blocks_per_seq, int32_t num_heads, float scale,
                     const PagedKv& cache) {
  check_cache("attention", cache);
  if (num_seqs < 0) fail("cpu attention: num_seqs {} is negative", num_seqs);
  if (num_seqs == 0) return;
  if (num_heads <= 0 || num_heads % cache.num_kv_heads != 0) {
    fail("cpu attention: num_heads {} is not a positive multiple of num_kv_heads {}", num_heads, cache.num_kv_heads);
  }
  const int64_t hd = cache.head_dim;
  const int64_t cols = static_cast<int64_t>(num_heads) * hd;
  if (query_start[0] != 0) fail("cpu attention: query_start[0] is {} (expected 0)", query_start[0]);
  for (int32_t s = 0; s < num_seqs; ++s) {
    const int32_t query_len = query_start[s + 1] - query_start[s];
    const int32_t context_len = context_lens[s];
    if (query_len < 0) fail("cpu attention: query_start is not monotonic at sequence {}", s);
    if (context_len < query_len) {
      fail("cpu attention: sequence {} has context_len {} < query_len {}", s, context_len, query_len);
    }
    const int64_t blocks = (static_cast<int64_t>(context_len) + cache.block_size - 1) / cache.block_size;
    if (blocks > max_blocks_per_seq) {
      fail("cpu attention: sequence {} needs {} blocks but the block table holds {}", s, blocks, max_blocks_per_seq);
    }
    for (int64_t b = 0; b < blocks; ++b) {
      const int32_t block = block_tables[static_cast<int64_t>(s) * max_blocks_per_seq + b];
      if (block < 0 || block >= cache.num_blocks) {
        fail("cpu attention: sequence {} block table entry {} is {} (cache has {} blocks)", s, b, block,
             cache.num_blocks);
      }
    }
  }
  const int64_t total_rows = query_start[num_seqs];
  detail::check_rows("attention", "q", q, total_rows, cols);
  detail::check_rows("attention", "out", out, total_rows, cols);

  const int32_t group = num_heads / cache.num_kv_heads;
  const int64_t num_tasks = static_cast<int64_t>(num_seqs) * cache.num_kv_heads;
  parallel_for(num_tasks, [&](int64_t task_begin, int64_t task_end) {
    std::vector<float> keys;
    std::vector<float> values;
    std::vector<float> scores;
    std::vector<float> q_row(static_cast<size_t>(hd));
    std::vector<float> acc(static_cast<size_t>(hd));
    for (int64_t task = task_begin; task < task_end; ++task) {
      const int64_t s = task / cache.num_kv_heads;
      const int64_t kv_head = task % cache.num_kv_heads;
      const int64_t row0 = query_start[s];
      const int64_t query_len = query_start[s + 1] - row0;
      const int64_t context_len = context_lens[s];
      if (query_len == 0) continue;
      keys.resize(static_cast<size_t>(context_len * hd));
      values.resize(static_cast<size_t>(context_len * hd));
      scores.resize(static_cast<size_t>(context_len));
      const int32_t* table = block_tables + s * max_blocks_per_seq;
      for (int64_t p = 0; p < context_len; ++p) {
        const int64_t offset = cache_offset(cache, table[p / cache.block_size], kv_head, p % cache.block_size);
        load_cache(cache.k, cache.dtype, offset, cache.k_scale, hd, keys.data() + p * hd);
        load_cache(cache.v, cache.dtype, offset, cache.v_scale, hd, values.data() + p * hd);
      }
      for (int64_t head = kv_head * group; head < (kv_head + 1) * group; ++head) {
        for (int64_t i = 0; i < query_len; ++i) {
          const int64_t row = row0 + i;
          const int64_t visible = context_len - query_len + i + 1;
          load_row(detail::row_ptr(q, row) + head * hd * static_cast<int64_t>(dtype_size(q.dtype)), q.dtype, hd,
                   q_row.data());
          float max_score = -std::numeric_limits<float>::infinity();
          for (int64_t p = 0; p < visible; ++p) {
            const float score = dot(q_row.data(), keys.data() + p * hd, hd) * scale;
            scores[static_cast<size_t>(p)] = score;
            max_score = std::max(max_score, score);
          }
          std::fill(acc.begin(), acc.end(), 0.0f);
          float total = 0.0f;
          for (int64_t p = 0; p < visible; ++p) {
            const float weight = std::exp(scores[static_cast<size_t>(p)] - max_score);
            total += weight;
            const float* value = values.data() + p * hd;
            for (int64_t d = 0; d < hd; ++d) acc[static_cast<size_t>(d)] += weight * value[d];
          }
          const float inv_total = 1.0f / total;
          for (int64_t d = 0; d < hd; ++d) acc[static_cast<size_t>(d)] *= inv_total;
          store_row(acc.data(), hd, detail::row_ptr(out, row) + head * hd * static_cast<int64_t>(dtype_size(out.dtype)),
                    out.dtype);
        }
      }
    }
  });
}

}  // namespace lathe::cpu
