#include "model/decode_graphs.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"

namespace lathe::model {

std::vector<int32_t> decode_graph_buckets(int32_t max_seqs, std::span<const int32_t> boundaries) {
  std::vector<int32_t> out;
  if (max_seqs < 1) return out;
  // Dense where a decode step is cheap and padding would cost a noticeable share of it, sparser
  // where steps are wide (padding 15 rows onto 113 is a few percent of the GEMM's time).
  for (int32_t b = 1; b <= max_seqs;) {
    out.push_back(b);
    if (b < 8) {
      b *= 2;
    } else if (b < 64) {
      b += 8;
    } else if (b < 128) {
      b += 16;
    } else {
      b += 32;
    }
  }
  out.push_back(max_seqs);
  for (int32_t boundary : boundaries) {
    if (boundary >= 1 && boundary <= max_seqs) out.push_back(boundary);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

DecodeInputLayout::DecodeInputLayout(int32_t rows, int32_t width) : max_rows(rows), table_width(width) {
  if (rows < 1 || width < 1) fail("internal: decode graph layout needs rows ({}) and table width ({}) >= 1", rows, width);
  const int64_t n = rows;
  token_ids = 0;
  positions = token_ids + n;
  slot_mapping = positions + n;
  query_start = slot_mapping + n;
  context_lens = query_start + n + 1;
  logits_rows = context_lens + n;
  block_tables = logits_rows + n;
}

bool fits_decode_graph(const ops::ForwardBatch& batch, const DecodeInputLayout& layout) {
  const int32_t seqs = batch.num_seqs();
  if (batch.phase != ops::Phase::kDecode || seqs < 1 || seqs > layout.max_rows) return false;
  if (batch.num_tokens() != seqs || batch.max_blocks_per_seq > layout.table_width) return false;
  if (static_cast<int32_t>(batch.logits_rows.size()) != seqs ||
      static_cast<int32_t>(batch.query_start.size()) != seqs + 1) {
    return false;
  }
  for (int32_t s = 0; s < seqs; ++s) {
    if (batch.query_start[static_cast<size_t>(s)] != s || batch.logits_rows[static_cast<size_t>(s)] != s) return false;
  }
  return batch.query_start[static_cast<size_t>(seqs)] == seqs;
}

void pack_padded_decode(const ops::ForwardBatch& batch, int32_t bucket, const DecodeInputLayout& layout,
                        std::vector<int32_t>& host) {
  const int32_t seqs = batch.num_seqs();
  if (bucket < seqs || bucket > layout.max_rows) {
    fail("internal: decode bucket {} cannot hold {} rows (widest {})", bucket, seqs, layout.max_rows);
  }
  host.assign(static_cast<size_t>(layout.prefix_elements(bucket)), 0);  // zeros: block 0, slot 0, token 0
  const auto at = [&host](int64_t base, int64_t i) -> int32_t& { return host[static_cast<size_t>(base + i)]; };
  for (int32_t r = 0; r < bucket; ++r) {
    const bool real = r < seqs;
    const auto i = static_cast<size_t>(r);
    at(layout.token_ids, r) = real ? batch.token_ids[i] : 0;
    at(layout.positions, r) = real ? batch.positions[i] : 0;
    at(layout.slot_mapping, r) = real ? batch.slot_mapping[i] : 0;
    at(layout.query_start, r) = r;
    at(layout.context_lens, r) = real ? batch.context_lens[i] : 1;
    at(layout.logits_rows, r) = r;
    if (real) {
      const auto src = batch.block_tables.begin() + static_cast<int64_t>(r) * batch.max_blocks_per_seq;
      std::copy(src, src + batch.max_blocks_per_seq, host.begin() + layout.block_tables + int64_t{r} * layout.table_width);
    }
  }
  at(layout.query_start, bucket) = bucket;
}

DecodeGraphs::DecodeGraphs(Qwen3Model& model, int32_t max_seqs, int32_t table_width, void* logits)
    : model_(model), layout_(max_seqs, table_width), logits_(logits) {
  const auto start = std::chrono::steady_clock::now();
  const Qwen3Options& mo = model_.options();
  if (max_seqs > std::min(mo.max_tokens_per_step, mo.max_logits_rows)) {
    fail("decode graphs: {} rows do not fit the model's step ({} tokens, {} logits rows)", max_seqs,
         mo.max_tokens_per_step, mo.max_logits_rows);
  }
  ops::Backend& be = model_.backend();
  buckets_ = decode_graph_buckets(max_seqs, be.decode_arm_boundaries());
  inputs_ = DeviceBuffer(be, static_cast<size_t>(layout_.total_elements()) * sizeof(int32_t), "decode graph inputs");
  graphs_.resize(buckets_.size());
  // Widest first: every grow-only workspace reaches its final size in the first warm-up.
  for (size_t i = buckets_.size(); i-- > 0;) {
    const int32_t rows = buckets_[i];
    ops::ForwardBatch padding;  // a step of padding rows only
    padding.phase = ops::Phase::kDecode;
    padding.query_start = {0};
    pack_padded_decode(padding, rows, layout_, host_);
    be.upload(inputs_.data(), host_.data(), host_.size() * sizeof(int32_t));
    const ops::DeviceBatch dev = device_batch(rows);
    StepRows step;
    step.decode_rows = rows;
    step.logits_rows = rows;
    step.decode_logits = rows;
    const ops::Act out = logits_view(rows);
    model_.forward_device(dev, step, out);  // eager warm-up
    be.synchronize();
    graphs_[i] = be.capture([&] { model_.forward_device(dev, step, out); });
    if (!graphs_[i]) fail("decode graphs: the {} backend cannot record graphs", be.name());
  }
  be.synchronize();
  capture_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

ops::DeviceBatch DecodeGraphs::device_batch(int32_t rows) const {
  const auto* base = static_cast<const int32_t*>(inputs_.data());
  ops::DeviceBatch d;
  d.phase = ops::Phase::kDecode;
  d.num_decode_rows = rows;
  d.num_tokens = rows;
  d.num_seqs = rows;
  d.max_blocks_per_seq = layout_.table_width;
  d.max_query_len = 1;
  // An upper bound only: decode kernels read each row's own length from context_lens.
  d.max_context_len = layout_.table_width * model_.kv_cache().shape().block_size;
  d.num_logits_rows = rows;
  d.token_ids = base + layout_.token_ids;
  d.positions = base + layout_.positions;
  d.slot_mapping = base + layout_.slot_mapping;
  d.query_start = base + layout_.query_start;
  d.context_lens = base + layout_.context_lens;
  d.block_tables = base + layout_.block_tables;
  d.logits_rows = base + layout_.logits_rows;
  return d;
}

ops::Act DecodeGraphs::logits_view(int64_t rows) const {
  ops::Act a;
  a.data = logits_;
  a.dtype = DType::kF32;
  a.rows = rows;
  a.cols = model_.vocab_size();
  a.stride = a.cols;
  return a;
}

ops::Act DecodeGraphs::run(const ops::ForwardBatch& batch, ops::OpClock* clock) {
  if (!fits_decode_graph(batch, layout_)) return {};
  const ops::Act out = logits_view(batch.num_seqs());
  (void)model_.plan_step(batch, out);  // validates ids, slots and blocks against the model
  const auto bucket = std::lower_bound(buckets_.begin(), buckets_.end(), batch.num_seqs());
  if (bucket == buckets_.end()) return {};
  pack_padded_decode(batch, *bucket, layout_, host_);
  // In stream order before the replay; the host does not wait for the copy.
  model_.backend().upload_async(inputs_.data(), host_.data(), host_.size() * sizeof(int32_t));
  if (clock) clock->mark();
  graphs_[static_cast<size_t>(bucket - buckets_.begin())]->replay();
  return out;
}

}  // namespace lathe::model
