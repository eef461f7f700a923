// The decode GEMV's per-shape policy, host only: the K split rules, the `auto` choice of kernel
// per (dtype, n, k), the default per dtype, and the variant names benchmarks and tests use.
// Every function here is a pure function of its arguments (never of m or the tier), which the
// bit identity across tiers needs (gemv.h).
#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/cuda/check.h"
#include "backends/cuda/gemv.h"
#include "backends/cuda/gemv_policy.h"
#include "core/error.h"

namespace lathe::cuda {

using namespace gemv_detail;

namespace {

// Default kernel per weight dtype (gemv_variant_name syntax): "auto" = gemv_auto_variant's
// per-shape choice. On the H200 (2026-11-30, bundle d11ca55, bench/results/gemv_sweep2_2026-11-30.txt)
// it beat the former default "ring" on every Qwen3-8B/32B decode-layer shape at m = 1 and 4
// (fp8 m = 1: +5% to +30%; 4096x4096 unchanged) and passed gpu_cuda_gemv_test (93/93) as
// LATHE_GEMV_TEST_VARIANT_FP8=auto and _BF16=auto in the same call. Its register-ring shapes
// stage 16 steps of x per buffer in tiers 1 and 4 since bundle 514cb15 measured that ("auto:g16",
// bench/results/gemv_sweep3_2026-11-30.txt: fp8 m = 1 +3% to +7% on the 8B shapes) and passed
// gpu_cuda_gemv_test 93/93 under that name. Since session 15 (bundle 3f12e9b, gpu_cuda_gemv_test
// 119/119 as the default and as auto:b3) it takes three CTAs per SM where that wave is much better
// filled (gemv_auto_variant). Change only together with a device run of gpu_cuda_gemv_test on the
// new choice.
constexpr const char* kDefaultFp8 = "auto";
constexpr const char* kDefaultBf16 = "auto";

// Default of gemv_early_weights: the ring's first steps before the wait. Measured against "off"
// and an L2 prefetch depth in the decode step (docs/PERFORMANCE.md, "Weights before the wait").
constexpr int kDefaultEarlyWeights = 0;
std::atomic<int> g_early_weights{kDefaultEarlyWeights};

// set_gemv_shape_variants' table; g_has_shape_variants spares gemv_default_variant the lock when
// it is empty (production).
std::mutex g_shape_variants_mutex;
std::vector<GemvShapeVariant> g_shape_variants;
std::atomic<bool> g_has_shape_variants{false};

std::optional<GemvVariant> shape_override(bool fp8, int64_t n, int64_t k) {
  if (!g_has_shape_variants.load(std::memory_order_acquire)) return std::nullopt;
  const std::lock_guard lock(g_shape_variants_mutex);
  for (const GemvShapeVariant& e : g_shape_variants)
    if (e.fp8 == fp8 && e.n == n && e.k == k) return e.variant;
  return std::nullopt;
}

bool parse_positive(std::string_view text, int64_t& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out > 0;
}

// One "dtype/NxK=variant" entry (spaces already removed).
std::optional<GemvShapeVariant> parse_shape_entry(std::string_view entry, std::string& error) {
  const size_t slash = entry.find('/');
  const size_t eq = entry.find('=');
  const size_t x = entry.find('x', slash == std::string_view::npos ? 0 : slash);
  if (slash == std::string_view::npos || eq == std::string_view::npos || x == std::string_view::npos ||
      x > eq) {
    error = "entry '" + std::string(entry) + "' is not dtype/NxK=variant";
    return std::nullopt;
  }
  GemvShapeVariant out;
  const std::string_view dtype = entry.substr(0, slash);
  if (dtype != "fp8" && dtype != "bf16") {
    error = "entry '" + std::string(entry) + "': dtype must be fp8 or bf16";
    return std::nullopt;
  }
  out.fp8 = dtype == "fp8";
  if (!parse_positive(entry.substr(slash + 1, x - slash - 1), out.n) ||
      !parse_positive(entry.substr(x + 1, eq - x - 1), out.k)) {
    error = "entry '" + std::string(entry) + "': N and K must be positive integers";
    return std::nullopt;
  }
  try {
    out.variant = gemv_variant_from_name(std::string(entry.substr(eq + 1)));
  } catch (const Error& e) {
    error = e.what();
    return std::nullopt;
  }
  if (out.variant.kernel == GemvKernel::kDefault) {
    error = "entry '" + std::string(entry) + "': 'default' is what an override replaces";
    return std::nullopt;
  }
  if (const std::string why = gemv_variant_unsupported_reason(out.fp8, out.n, out.k, out.variant);
      !why.empty()) {
    error = "entry '" + std::string(entry) + "': " + why;
    return std::nullopt;
  }
  return out;
}

}  // namespace

std::optional<std::vector<GemvShapeVariant>> parse_gemv_shape_variants(const std::string& text,
                                                                       std::string* error) {
  std::string compact;
  for (const char ch : text)
    if (!std::isspace(static_cast<unsigned char>(ch)))
      compact += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  std::vector<GemvShapeVariant> out;
  std::string why;
  size_t pos = 0;
  while (!compact.empty() && pos <= compact.size()) {
    const size_t next = std::min(compact.find(',', pos), compact.size());
    const std::string_view entry = std::string_view(compact).substr(pos, next - pos);
    pos = next + 1;
    if (entry.empty()) {
      if (next == compact.size() && !out.empty()) break;  // a trailing comma
      why = "empty entry";
      break;
    }
    std::optional<GemvShapeVariant> parsed = parse_shape_entry(entry, why);
    if (!parsed) break;
    const bool repeated = std::any_of(out.begin(), out.end(), [&](const GemvShapeVariant& e) {
      return e.fp8 == parsed->fp8 && e.n == parsed->n && e.k == parsed->k;
    });
    if (repeated) {
      why = "entry '" + std::string(entry) + "' repeats its shape";
      break;
    }
    out.push_back(*parsed);
  }
  if (!why.empty()) {
    if (error != nullptr) *error = why;
    return std::nullopt;
  }
  return out;
}

void set_gemv_shape_variants(std::vector<GemvShapeVariant> overrides) {
  const std::lock_guard lock(g_shape_variants_mutex);
  g_shape_variants = std::move(overrides);
  g_has_shape_variants.store(!g_shape_variants.empty(), std::memory_order_release);
}

std::vector<GemvShapeVariant> gemv_shape_variants() {
  const std::lock_guard lock(g_shape_variants_mutex);
  return g_shape_variants;
}

void set_gemv_early_weights(int steps) {
  g_early_weights.store(std::clamp(steps, -1, kGemvEarlyWeightsMax), std::memory_order_relaxed);
}

int gemv_early_weights() { return g_early_weights.load(std::memory_order_relaxed); }

namespace {
std::atomic<bool> g_split_sum{true};
std::atomic<uint32_t> g_split_sum_wait_ns{kGemvSplitSumWaitNs};
std::atomic<int> g_split_sum_nowait_rows{kGemvSplitSumNoWaitRows};
}  // namespace

void set_gemv_split_sum(bool on) {
  g_split_sum.store(on, std::memory_order_relaxed);
}

bool gemv_split_sum() {
  return g_split_sum.load(std::memory_order_relaxed);
}

void set_gemv_split_sum_wait_ns(uint32_t ns) {
  g_split_sum_wait_ns.store(ns, std::memory_order_relaxed);
}

uint32_t gemv_split_sum_wait_ns() {
  return g_split_sum_wait_ns.load(std::memory_order_relaxed);
}

void set_gemv_split_sum_nowait_rows(int rows) {
  g_split_sum_nowait_rows.store(rows, std::memory_order_relaxed);
}

int gemv_split_sum_nowait_rows() {
  return g_split_sum_nowait_rows.load(std::memory_order_relaxed);
}

int gemv_ksplit(int64_t n, int64_t k) {
  const int64_t ksteps = std::max<int64_t>(1, k / kStepK);
  return static_cast<int>((ksteps + gemv_chunk_steps(n, k) - 1) / gemv_chunk_steps(n, k));
}

int gemv_chunk_steps(int64_t n, int64_t k) {
  const int64_t ksteps = std::max<int64_t>(1, k / kStepK);
  const int64_t blocks = std::max<int64_t>(1, (n + kRowsPerCta - 1) / kRowsPerCta);
  int64_t split = 1;
  if (blocks < kTargetCtas && n % 2 == 0) {  // odd n: no K split (gemv_ring_ksplit says why)
    const int64_t want = (kTargetCtas + blocks - 1) / blocks;
    split = std::clamp<int64_t>(want, 1, std::max<int64_t>(1, ksteps / 4));
  }
  return static_cast<int>((ksteps + split - 1) / split);
}

int gemv_ring_ksplit(int64_t n, int64_t k, int want) {
  if (want <= 0) return gemv_ksplit(n, k);
  const int64_t ksteps = std::max<int64_t>(1, k / kStepK);
  const int64_t blocks = std::max<int64_t>(1, (n + kRowsPerCta - 1) / kRowsPerCta);
  // Odd n: one split. Tier 4 sums the split slots in pairs of rows, and the pair that straddles n
  // would wait forever for the slot of row n, which no split writes (gemv_common.cuh,
  // sum_split_slots). Every Qwen3 shape is even; odd ones give up the split rather than the 1- and
  // 4-row tiers their slot sum (session 30: both ways of summing past n measured 0.5-2% longer
  // Qwen3 decode steps).
  if (n % 2 != 0) return 1;
  int64_t split = std::min<int64_t>(want, std::max<int64_t>(1, ksteps / 2));
  split = std::min<int64_t>(split, std::max<int64_t>(1, static_cast<int64_t>(kGemvWorkspaceFloats) / (16 * n)));
  if (blocks > kGemvCounterCount) split = 1;
  const int64_t chunk = (ksteps + split - 1) / split;
  return static_cast<int>((ksteps + chunk - 1) / chunk);
}

int gemv_ring_chunk_steps(int64_t n, int64_t k, int want) {
  if (want <= 0) return gemv_chunk_steps(n, k);
  const int64_t ksteps = std::max<int64_t>(1, k / kStepK);
  const int split = gemv_ring_ksplit(n, k, want);
  return static_cast<int>((ksteps + split - 1) / split);
}

std::string gemv_variant_name(const GemvVariant& v) {
  const char* kernel = v.kernel == GemvKernel::kDefault        ? "default"
                       : v.kernel == GemvKernel::kStream       ? "stream"
                       : v.kernel == GemvKernel::kRegisterRing ? "ring"
                       : v.kernel == GemvKernel::kAuto         ? "auto"
                                                               : "ringbal";
  std::string out = kernel;
  if (v.stages != 0) out += ":s" + std::to_string(v.stages);
  if (v.ctas != 0) out += ":c" + std::to_string(v.ctas);
  if (v.row_bytes != 0) out += ":r" + std::to_string(v.row_bytes);
  if (v.ksplit != 0) out += ":k" + std::to_string(v.ksplit);
  if (v.group_steps != 0) out += ":g" + std::to_string(v.group_steps);
  if (v.ctas_per_sm != 0) out += ":b" + std::to_string(v.ctas_per_sm);
  if (v.bit_trick) out += ":bits";
  if (v.tma) out += ":tma";
  if (v.wgmma) out += ":wg";
  if (v.wgmma_narrow) out += v.wgmma_narrow_copied_x_only ? ":wgnu" : ":wgn";
  if (v.x_tensor) out += ":xt";
  if (v.split_sum_all) out += ":sa";
  if (v.early_weights == -1) out += ":eoff";
  if (v.early_weights >= 0) out += ":e" + std::to_string(v.early_weights);
  return out;
}

GemvVariant gemv_variant_from_name(const std::string& name) {
  GemvVariant v;
  size_t pos = 0;
  bool first = true;
  while (pos <= name.size()) {
    const size_t next = std::min(name.find(':', pos), name.size());
    const std::string part = name.substr(pos, next - pos);
    if (first) {
      if (part == "default")
        v.kernel = GemvKernel::kDefault;
      else if (part == "stream")
        v.kernel = GemvKernel::kStream;
      else if (part == "ring")
        v.kernel = GemvKernel::kRegisterRing;
      else if (part == "ringbal")
        v.kernel = GemvKernel::kRingBalanced;
      else if (part == "auto")
        v.kernel = GemvKernel::kAuto;
      else
        throw_error("gemv variant '" + name + "': unknown kernel '" + part + "'");
      first = false;
    } else if (part == "bits") {
      v.bit_trick = true;
    } else if (part == "tma") {
      v.tma = true;
    } else if (part == "wg") {
      v.wgmma = true;
    } else if (part == "wgn" || part == "wgnu") {
      v.wgmma_narrow = true;
      v.wgmma_narrow_copied_x_only = part == "wgnu";
    } else if (part == "xt") {
      v.x_tensor = true;
    } else if (part == "sa") {
      v.split_sum_all = true;
    } else if (part == "g4" || part == "g16") {
      v.group_steps = std::stoi(part.substr(1));
    } else if (part == "eoff") {
      v.early_weights = -1;
    } else if (part.size() >= 2 && part.size() <= 3 && part[0] == 'e' &&
               part.find_first_not_of("0123456789", 1) == std::string::npos) {
      const int steps = std::stoi(part.substr(1));
      if (steps > kGemvEarlyWeightsMax)
        throw_error("gemv variant '" + name + "': early reads '" + part + "' exceed " +
                    std::to_string(kGemvEarlyWeightsMax) + " steps");
      v.early_weights = steps;
    } else if (part == "b2" || part == "b3") {
      v.ctas_per_sm = std::stoi(part.substr(1));
    } else if (part.size() >= 2 && part.size() <= 6 &&
               (part[0] == 's' || part[0] == 'c' || part[0] == 'r' || part[0] == 'k') &&
               part.find_first_not_of("0123456789", 1) == std::string::npos) {
      const int value = std::stoi(part.substr(1));
      (part[0] == 's' ? v.stages : part[0] == 'c' ? v.ctas : part[0] == 'r' ? v.row_bytes : v.ksplit) = value;
    } else {
      throw_error("gemv variant '" + name + "': bad field '" + part + "'");
    }
    pos = next + 1;
  }
  return v;
}

namespace gemv_detail {

GemvVariant auto_variant_for_wave(bool fp8, int64_t n, int64_t k, int wave) {
  const int64_t blocks = std::max<int64_t>(1, (n + kRowsPerCta - 1) / kRowsPerCta);
  const int64_t ksteps = std::max<int64_t>(1, k / kStepK);
  GemvVariant v;
  if (blocks > wave) {
    v.kernel = GemvKernel::kRingBalanced;
    return v;
  }
  v.kernel = GemvKernel::kRegisterRing;
  // Every split keeps at least kMinSplitBytes of weights a row block: 6 steps of fp8, 3 of bf16.
  const int64_t elem_bytes = fp8 ? 1 : 2;
  const int64_t fill =
      std::min<int64_t>(wave / blocks, ksteps * kStepK * kRowsPerCta * elem_bytes / kMinSplitBytes);
  v.ksplit = static_cast<int>(std::max<int64_t>(gemv_ksplit(n, k), std::max<int64_t>(1, fill)));
  if (fp8 && gemv_ring_chunk_steps(n, k, v.ksplit) >= 32) v.stages = 4;
  v.group_steps = kWideGroupSteps;  // used by tiers 1 and 4 (the 16-row tier stages 4 steps)
  return v;
}

}  // namespace gemv_detail

namespace {

// Share of a wave of `wave` CTA slots that a register-ring choice fills.
double ring_wave_fill(const GemvVariant& v, int64_t n, int64_t k, int wave) {
  const int64_t blocks = std::max<int64_t>(1, (n + kRowsPerCta - 1) / kRowsPerCta);
  return static_cast<double>(blocks * gemv_ring_ksplit(n, k, v.ksplit)) / wave;
}

}  // namespace

GemvVariant gemv_auto_variant(bool fp8, int64_t n, int64_t k) {
  if (!fp8 && (n + kRowsPerCta - 1) / kRowsPerCta >= kStreamTmaMinBlocks) {
    GemvVariant stream;
    stream.kernel = GemvKernel::kStream;
    stream.tma = true;
    stream.ctas_per_sm = 2;
    return stream;
  }
  GemvVariant two = auto_variant_for_wave(fp8, n, k, kRingBalancedCtas);
  if (two.kernel == GemvKernel::kRingBalanced && fp8) {
    // FP8 weights of more than 264 row blocks take the balanced grid with the warpgroup MMA in the
    // 16- and 32-row tiers (":wg", session 48) and the 16-row tier's x by tensor copies (":xt",
    // session 49). Decoder-layer shapes (Qwen3-32B and Qwen3.5-27B gate|up) run it at two CTAs
    // per SM: at three (session 16: 2.4% faster at m = 1 and 4 in context on the H200) the wide
    // tiers are held to 80 registers and spill (the 32-row :wg kernel 236 / 308 bytes), and on the
    // H100 (session 49, three rounds) the Qwen3-32B-FP8 step at two CTAs per SM was 13.5% shorter
    // at batch 32, 3.1% at batch 16, level at batch 1 and 0.5% longer at batch 4, although by
    // kernel gate|up lost 3.5-5 points of the read ceiling at m = 1 and 4. Vocabulary projections
    // (kStreamTmaMinBlocks row blocks and more: fp8 lm_heads) keep three CTAs per SM, 3.9-7.5 points
    // faster by kernel at m = 1..16 there (session 49).
    two.wgmma = true;
    two.x_tensor = true;
    if ((n + kRowsPerCta - 1) / kRowsPerCta >= kStreamTmaMinBlocks) {
      two.ctas_per_sm = 3;
      return two;
    }
    // At two CTAs per SM tiers 1 and 4 take the n8 warpgroup MMA where they copy x (":wgnu";
    // session 61, H100): after a separate norm 3.5-3.8 us faster on Qwen3-32B gate|up (86.5 -> 90.0%
    // of the read ceiling at m = 1, 83.6 -> 87.0% at m = 4; Qwen3.5-27B +2.7-2.9 points) and the
    // Qwen3-32B-FP8 step 0.8% shorter at batch 4 (1.1% at batch 1 without the fused norm), while the
    // form that normalises x itself lengthened the batch-1 step by 0.3%, so that one keeps mma.sync.
    two.wgmma_narrow = true;
    two.wgmma_narrow_copied_x_only = true;
    return two;
  }
  if (two.kernel != GemvKernel::kRegisterRing) return two;
  // FP8 weights on the two-CTA ring take the warpgroup MMA in the 16- and 32-row tiers (":wg"),
  // tiers 1 and 4 keep mma.sync. Session 24 (H200) found ":wg" there faster by kernel yet the
  // batch-16 step longer; since fp8 weights are stored K-permuted (session 45, x staged by 16-byte
  // copies) it is 7-9 points of the read ceiling faster at 16 rows on the Qwen3-8B/32B q|k|v, o
  // and down, and the decode step (H100, dummy weights, 1k context) 3.7% shorter at batch 16 and
  // 2.7-4.0% at 32 on Qwen3-8B-FP8 and Qwen3-32B-FP8 (docs/PERFORMANCE.md, "Session 45").
  // Tiers 1 and 4 take it too (":wgn", n8 MMAs; the QK-norm/RoPE epilogue built there since
  // session 48): by kernel 0.5-2.4 points faster at m = 4 on all six Qwen3-8B/32B two-CTA shapes
  // and mixed at m = 1 (H100, session 47); with q|k|v, o and down all on it the Qwen3-8B-FP8 step
  // (H200, session 48) 2.0% shorter at batch 4, 0.6% at batch 1, level at 16 and 32.
  two.wgmma = fp8;
  two.wgmma_narrow = fp8;
  // Every K split sums its share of the block's rows in the 16- and 32-row tiers (":sa", both dtypes;
  // the three-CTA ring below does not build it). Session 50, decode steps at batch 16 / 32 (dummy
  // weights, 1k context): H200 Qwen3-8B-FP8 -2.0 / -5.5%, Qwen3-8B -1.3 / -4.3%, Qwen3-32B-FP8 -0.4
  // / -2.2%; H100 Qwen3-8B-FP8 -2.1 / -3.4%, Qwen3-32B-FP8 level / -1.5% (batch 8: -1.0 / +0.7%).
  // By kernel the 32-row tier gains 0.2-7.3 points everywhere, the 16-row tier moves by -2.5..+4.6
  // and lost up to 3.2 at 8 rows (docs/PERFORMANCE.md, "Session 50"), most of which the splits' not
  // waiting up to 8 rows took back (gemv_split_sum_nowait_rows, "Session 51").
  two.split_sum_all = true;
  GemvVariant three = auto_variant_for_wave(fp8, n, k, 3 * kRingWaveSms);
  if (three.kernel != GemvKernel::kRegisterRing ||
      ring_wave_fill(three, n, k, 3 * kRingWaveSms) <
          ring_wave_fill(two, n, k, kRingBalancedCtas) + kThreeCtaFillGain)
    return two;
  three.ctas_per_sm = 3;
  three.stages = 0;  // the three-CTA budget builds one ring depth per dtype (fp8 2, bf16 1)
  // FP8 weights there take the warpgroup MMA in every tier: Qwen3-8B gate|up in context at m = 16
  // 39.6 -> 35.2 us, at m = 8 37.7 -> 31.3 us (session 23), at m = 1 29.0 -> 28.2 us and at m = 4
  // 31.5 -> 30.4 us with tiers 1 and 4 as n8 MMAs (session 24; the Qwen3-8B-FP8 step at batch 4
  // 0.9-1.4% shorter, docs/PERFORMANCE.md).
  three.wgmma = fp8;
  three.wgmma_narrow = fp8;
  return three;
}

GemvVariant gemv_resolve_variant(const GemvVariant& variant, bool fp8, int64_t n, int64_t k) {
  // A default request takes the shape's override or the dtype's default, and that choice's own
  // fields qualify "auto" below (an override "auto:eoff" keeps its eoff).
  const GemvVariant request =
      variant.kernel == GemvKernel::kDefault ? gemv_default_variant(fp8, n, k) : variant;
  if (request.kernel != GemvKernel::kAuto) return request;
  // "auto:g4" (the old staging depth), "auto:b3" (the choice for a wave of 3 CTAs per SM, rings of
  // the depth that budget allows), "auto:s2" / "auto:s4" (the ring depth pinned), "auto:k8" (the K
  // split pinned where the choice is the register ring), "auto:eoff".
  GemvVariant v = request.ctas_per_sm == 3 ? auto_variant_for_wave(fp8, n, k, 3 * kRingWaveSms)
                                           : gemv_auto_variant(fp8, n, k);
  if (request.group_steps != 0) v.group_steps = request.group_steps;
  if (request.ctas_per_sm != 0) v.ctas_per_sm = request.ctas_per_sm;
  if (v.ctas_per_sm == 3) v.stages = 0;
  if (request.stages != 0) v.stages = request.stages;
  if (request.ksplit != 0 && v.kernel == GemvKernel::kRegisterRing) v.ksplit = request.ksplit;
  v.early_weights = request.early_weights;
  v.wgmma = v.wgmma || request.wgmma;  // ":wg" and ":wgn" ask for it on every shape
  if (request.wgmma_narrow) {          // ":wgn" / ":wgnu" ask for it on every shape, as the request says
    v.wgmma_narrow = true;
    v.wgmma_narrow_copied_x_only = request.wgmma_narrow_copied_x_only;
  }
  v.x_tensor = v.x_tensor || request.x_tensor;
  v.split_sum_all = v.split_sum_all || request.split_sum_all;
  return v;
}

GemvVariant gemv_default_variant(bool fp8, int64_t n, int64_t k) {
  if (std::optional<GemvVariant> v = shape_override(fp8, n, k)) return *v;
  static const GemvVariant fp8_default = gemv_variant_from_name(kDefaultFp8);
  static const GemvVariant bf16_default = gemv_variant_from_name(kDefaultBf16);
  const GemvVariant v = fp8 ? fp8_default : bf16_default;
  return v.kernel == GemvKernel::kAuto ? gemv_auto_variant(fp8, n, k) : v;
}

namespace gemv_detail {

RingConfig ring_config(const GemvVariant& v, bool fp8, bool fused_norm) {
  RingConfig cfg;
  cfg.fp8 = fp8;
  cfg.stages = v.stages != 0 ? v.stages : (fp8 ? 2 : 1);
  cfg.bit_trick = v.bit_trick;
  cfg.group_steps = v.group_steps;
  cfg.ctas_per_sm = v.ctas_per_sm;
  cfg.wgmma = v.wgmma;
  cfg.wgmma_narrow = v.wgmma_narrow && !(fused_norm && v.wgmma_narrow_copied_x_only);
  cfg.x_tensor = v.x_tensor;
  return cfg;
}

bool ring_config_supported(const RingConfig& cfg) {
  if ((cfg.wgmma || cfg.wgmma_narrow) && cfg.bit_trick) return false;
  // ":xt" stages the 16-row tier's warpgroup-MMA x (":wg") of fp8 weights.
  if (cfg.x_tensor && !(cfg.fp8 && cfg.wgmma)) return false;
  if (cfg.ctas_per_sm == 3) return !cfg.bit_trick && cfg.stages == (cfg.fp8 ? 2 : 1);
  if (cfg.fp8) return cfg.bit_trick ? cfg.stages == 2 : (cfg.stages == 2 || cfg.stages == 4);
  return cfg.stages == 1 || cfg.stages == 2;
}

bool epilogue_built(int tier, const RingConfig& cfg, bool rope) {
  if (tier == 32) return !cfg.bit_trick && !rope;  // SwiGLU at the tier's own ring depth
  if (cfg.bit_trick || cfg.stages != (cfg.fp8 ? 2 : 1)) return false;
  if (rope) {
    return cfg.ctas_per_sm != 3 &&
           (tier == 16 ? !cfg.wgmma : cfg.wgmma_narrow || cfg.group_steps == kWideGroupSteps);
  }
  return tier == 16 || cfg.wgmma_narrow || cfg.group_steps == kWideGroupSteps;
}

}  // namespace gemv_detail

std::string gemv_epilogue_unbuilt_reason(int tier, bool fp8, const GemvVariant& resolved, bool rope,
                                         bool has_wgmma, bool fused_norm) {
  const char* what = rope ? "the QK-norm/RoPE epilogue" : "the SwiGLU epilogue";
  if (resolved.kernel != GemvKernel::kRegisterRing)
    return std::string(what) +
           " runs on the register ring with one CTA per row block only (this shape takes " +
           gemv_variant_name(resolved) + ")";
  RingConfig cfg = ring_config(resolved, fp8, fused_norm);
  if (!has_wgmma) cfg.wgmma = cfg.wgmma_narrow = false;  // as gemv_launch runs it there
  if (epilogue_built(tier, cfg, rope)) return {};
  return std::string(what) +
         (rope ? " is built for the two-CTA ring (fp8 s2, bf16 s1; ':g16' or ':wgn' in tiers 1 and 4, "
                 "no ':wg' in the 16-row tier, none in the 32-row tier) only"
               : " is built for the ring depth auto takes (fp8 s2, bf16 s1, no ':bits') and, "
                 "in tiers 1 and 4, for ':g16' or ':wgn' only") +
         " (this shape takes " + gemv_variant_name(resolved) + ")";
}

}  // namespace lathe::cuda
