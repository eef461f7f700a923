// Dummy (random) Qwen3 weights from a config alone (model/dummy_weights.h).
#include "model/dummy_weights.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <memory>
#include <regex>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "core/hash.h"
#include "core/numeric.h"
#include "core/parallel.h"

namespace lathe::model {
namespace {

constexpr float kFp8Max = 448.0f;
constexpr int64_t kWordsPerChunk = int64_t{1} << 14;  // parallel_for grain (64-bit words)

// The stream of one tensor: word k is a hash of (tensor key, k), so any element can be produced
// alone and every thread split gives the same bytes.
struct Stream {
  uint64_t key;
  uint64_t word(uint64_t index) const { return splitmix64(key ^ splitmix64(index)); }
  // The 16-bit draw of element e (four per word).
  uint16_t draw16(uint64_t element) const {
    return static_cast<uint16_t>(word(element >> 2) >> (16 * (element & 3)));
  }
};

Stream tensor_stream(uint64_t seed, const std::string& name, uint64_t salt) {
  return Stream{splitmix64(splitmix64(seed) ^ fnv1a64(name) ^ salt)};
}

// Uniform in [-1, 1) from a 16-bit draw (cell centres, so symmetric around 0).
float unit_from16(uint16_t draw) { return (static_cast<float>(draw) + 0.5f) * (2.0f / 65536.0f) - 1.0f; }

// BF16 bits of every 16-bit draw for values uniform in [-a, a).
std::vector<uint16_t> bf16_table(float a) {
  std::vector<uint16_t> table(65536);
  for (uint32_t d = 0; d < 65536; ++d) table[d] = to_bf16(a * unit_from16(static_cast<uint16_t>(d))).bits;
  return table;
}

// E4M3 codes of every 16-bit draw: uniform in [-448, 448) rounded to nearest even (never NaN:
// the conversion saturates at +-448).
const std::array<uint8_t, 65536>& fp8_table() {
  static const std::array<uint8_t, 65536> table = [] {
    std::array<uint8_t, 65536> out{};
    for (uint32_t d = 0; d < 65536; ++d) out[d] = float_to_fp8_e4m3(kFp8Max * unit_from16(static_cast<uint16_t>(d)));
    return out;
  }();
  return table;
}

// Writes count elements of type T, element e = table[draw16(e)], on the parallel workers.
template <typename T, typename Table>
void fill_from_table(const Stream& stream, const Table& table, T* out, int64_t count) {
  const int64_t words = (count + 3) / 4;
  parallel_for(
      words,
      [&](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) {
          const uint64_t w = stream.word(static_cast<uint64_t>(k));
          const int64_t first = k * 4;
          const int64_t last = std::min<int64_t>(first + 4, count);
          for (int64_t e = first; e < last; ++e) out[e] = table[static_cast<uint16_t>(w >> (16 * (e - first)))];
        }
      },
      kWordsPerChunk);
}

// Uniform half-width giving standard deviation `std` (a uniform on [-a, a] has std a / sqrt(3)).
float half_width(float std) { return std * std::sqrt(3.0f); }

enum class Field {
  kEmbed, kLmHead, kFinalNorm,
  kQ, kK, kV, kO, kQBias, kKBias, kVBias, kOBias,
  kGate, kUp, kDown,
  kInputNorm, kPostNorm, kQNorm, kKNorm,
};

struct Entry {
  DummyTensorSpec spec;
  int64_t layer = -1;
  Field field = Field::kEmbed;
};

void require_positive(int64_t value, const ModelConfig& config, const char* field) {
  if (value <= 0) fail("{}: '{}' must be positive for dummy weights, got {}", (config.dir / "config.json").string(), field, value);
}

// Whether the config's ignore list (modules_to_not_convert / ignore) names `module`: HF's rule
// is a substring match; compressed-tensors' "re:" entries are regexes matched from the start.
bool ignored(const std::vector<std::string>& ignore, const std::string& module) {
  for (const std::string& entry : ignore) {
    if (entry.rfind("re:", 0) == 0) {
      try {
        if (std::regex_search(module, std::regex("^(?:" + entry.substr(3) + ")"))) return true;
      } catch (const std::regex_error&) {
        fail("quantization_config: ignore entry '{}' is not a valid regular expression", entry);
      }
    } else if (module.find(entry) != std::string::npos) {
      return true;
    }
  }
  return false;
}

ops::ScaleKind quant_scale_kind(const QuantConfig& quant) {
  switch (quant.method) {
    case QuantConfig::Method::kNone:
      return ops::ScaleKind::kNone;
    case QuantConfig::Method::kFp8Block:
      return ops::ScaleKind::kBlock128;
    case QuantConfig::Method::kCompressedTensors:
      if (quant.strategy == "channel") return ops::ScaleKind::kPerChannel;
      if (quant.strategy == "tensor") return ops::ScaleKind::kPerTensor;
      return ops::ScaleKind::kBlock128;
  }
  return ops::ScaleKind::kNone;
}

std::vector<Entry> entries(const ModelConfig& config) {
  require_positive(config.vocab_size, config, "vocab_size");
  require_positive(config.hidden_size, config, "hidden_size");
  require_positive(config.intermediate_size, config, "intermediate_size");
  require_positive(config.num_hidden_layers, config, "num_hidden_layers");
  require_positive(config.num_attention_heads, config, "num_attention_heads");
  require_positive(config.num_key_value_heads, config, "num_key_value_heads");
  require_positive(config.head_dim, config, "head_dim");

  const std::string& p = config.weight_prefix;
  const int64_t hidden = config.hidden_size;
  const int64_t q_rows = config.num_attention_heads * config.head_dim;
  const int64_t kv_rows = config.num_key_value_heads * config.head_dim;
  const int64_t inter = config.intermediate_size;
  const ops::ScaleKind quant_kind = quant_scale_kind(config.quant);

  std::vector<Entry> out;
  auto vector = [&](std::string name, int64_t size, DummyTensorSpec::Role role, int64_t layer, Field field) {
    out.push_back({DummyTensorSpec{std::move(name), role, size, 1, DType::kF32, ops::ScaleKind::kNone}, layer, field});
  };
  // A matrix; `linear` ones (decoder projections) are FP8 when the config quantizes them.
  auto matrix = [&](const std::string& module, int64_t rows, int64_t cols, bool linear, int64_t layer, Field field) {
    const bool fp8 = linear && quant_kind != ops::ScaleKind::kNone && !ignored(config.quant.ignore, module);
    out.push_back({DummyTensorSpec{module + ".weight", DummyTensorSpec::Role::kMatrix, rows, cols,
                                   fp8 ? DType::kF8E4M3 : DType::kBF16, fp8 ? quant_kind : ops::ScaleKind::kNone},
                   layer, field});
  };

  matrix(p + "embed_tokens", config.vocab_size, hidden, false, -1, Field::kEmbed);
  if (!config.tie_word_embeddings) matrix("lm_head", config.vocab_size, hidden, false, -1, Field::kLmHead);
  vector(p + "norm.weight", hidden, DummyTensorSpec::Role::kNorm, -1, Field::kFinalNorm);
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const std::string layer = fmt::format("{}layers.{}.", p, i);
    const struct {
      const char* name;
      int64_t rows, cols;
      Field field, bias;
    } attn[] = {{"self_attn.q_proj", q_rows, hidden, Field::kQ, Field::kQBias},
                {"self_attn.k_proj", kv_rows, hidden, Field::kK, Field::kKBias},
                {"self_attn.v_proj", kv_rows, hidden, Field::kV, Field::kVBias},
                {"self_attn.o_proj", hidden, q_rows, Field::kO, Field::kOBias}};
    for (const auto& a : attn) {
      matrix(layer + a.name, a.rows, a.cols, true, i, a.field);
      if (config.attention_bias) vector(layer + a.name + ".bias", a.rows, DummyTensorSpec::Role::kBias, i, a.bias);
    }
    matrix(layer + "mlp.gate_proj", inter, hidden, true, i, Field::kGate);
    matrix(layer + "mlp.up_proj", inter, hidden, true, i, Field::kUp);
    matrix(layer + "mlp.down_proj", hidden, inter, true, i, Field::kDown);
    vector(layer + "input_layernorm.weight", hidden, DummyTensorSpec::Role::kNorm, i, Field::kInputNorm);
    vector(layer + "post_attention_layernorm.weight", hidden, DummyTensorSpec::Role::kNorm, i, Field::kPostNorm);
    vector(layer + "self_attn.q_norm.weight", config.head_dim, DummyTensorSpec::Role::kNorm, i, Field::kQNorm);
    vector(layer + "self_attn.k_norm.weight", config.head_dim, DummyTensorSpec::Role::kNorm, i, Field::kKNorm);
  }
  return out;
}

// Dummy options are fixed per call; the BF16 table depends on matrix_std only.
class Filler {
 public:
  explicit Filler(const DummyOptions& options) : options_(options), bf16_(bf16_table(half_width(options.matrix_std))) {
    if (!(options.matrix_std > 0.0f) || !std::isfinite(options.matrix_std) || !(options.norm_std >= 0.0f) ||
        !std::isfinite(options.norm_std)) {
      fail("dummy weights: matrix_std ({}) must be positive and norm_std ({}) non-negative", options.matrix_std,
           options.norm_std);
    }
  }

  void fill(const DummyTensorSpec& spec, void* data, float* scale) const {
    const Stream stream = tensor_stream(options_.seed, spec.name, 0);
    const int64_t count = spec.elements();
    switch (spec.role) {
      case DummyTensorSpec::Role::kMatrix:
        if (spec.dtype == DType::kF8E4M3) {
          fill_from_table(stream, fp8_table(), static_cast<uint8_t*>(data), count);
          fill_scales(spec, scale);
        } else if (spec.dtype == DType::kBF16) {
          fill_from_table(stream, bf16_, static_cast<uint16_t*>(data), count);
        } else {
          fail("dummy weights: tensor '{}' has dtype {}, expected BF16 or F8_E4M3", spec.name, dtype_name(spec.dtype));
        }
        break;
      case DummyTensorSpec::Role::kNorm:
        fill_vector(stream, 1.0f, half_width(options_.norm_std), static_cast<float*>(data), count);
        break;
      case DummyTensorSpec::Role::kBias:
        fill_vector(stream, 0.0f, half_width(options_.matrix_std), static_cast<float*>(data), count);
        break;
    }
  }

 private:
  // bf16-representable f32 values centre + a * unit.
  static void fill_vector(const Stream& stream, float centre, float a, float* out, int64_t count) {
    for (int64_t e = 0; e < count; ++e) out[e] = round_bf16(centre + a * unit_from16(stream.draw16(static_cast<uint64_t>(e))));
  }

  // scale_j = (a / 448) * (0.75 + 0.5 u_j): dequantized values uniform-ish with std ~matrix_std.
  void fill_scales(const DummyTensorSpec& spec, float* scale) const {
    const Stream stream = tensor_stream(options_.seed, spec.name, 0x5CA1E5ull);
    const float base = half_width(options_.matrix_std) / kFp8Max;
    const int64_t count = spec.scale_count();
    for (int64_t j = 0; j < count; ++j) {
      const float u = static_cast<float>(stream.word(static_cast<uint64_t>(j)) >> 40) * (1.0f / 16777216.0f);
      scale[j] = base * (0.75f + 0.5f * u);
    }
  }

  DummyOptions options_;
  std::vector<uint16_t> bf16_;
};

// Owned buffers of the whole-model form (default-initialised: the fill touches every page, on
// all workers, instead of a single-threaded zeroing first).
struct DummyStorage {
  std::vector<std::unique_ptr<uint8_t[]>> buffers;
  void* allocate(size_t bytes) {
    buffers.push_back(std::make_unique_for_overwrite<uint8_t[]>(bytes));
    return buffers.back().get();
  }
};

HostWeight* matrix_slot(Qwen3Weights& w, const Entry& e) {
  if (e.field == Field::kEmbed) return &w.embed_tokens;
  if (e.field == Field::kLmHead) return &w.lm_head;
  Qwen3LayerWeights& l = w.layers.at(static_cast<size_t>(e.layer));
  switch (e.field) {
    case Field::kQ: case Field::kQBias: return &l.q_proj;
    case Field::kK: case Field::kKBias: return &l.k_proj;
    case Field::kV: case Field::kVBias: return &l.v_proj;
    case Field::kO: case Field::kOBias: return &l.o_proj;
    case Field::kGate: return &l.gate_proj;
    case Field::kUp: return &l.up_proj;
    case Field::kDown: return &l.down_proj;
    default: return nullptr;
  }
}

std::vector<float>* vector_slot(Qwen3Weights& w, const Entry& e) {
  if (e.field == Field::kFinalNorm) return &w.final_norm;
  Qwen3LayerWeights& l = w.layers.at(static_cast<size_t>(e.layer));
  switch (e.field) {
    case Field::kInputNorm: return &l.input_layernorm;
    case Field::kPostNorm: return &l.post_attention_layernorm;
    case Field::kQNorm: return &l.q_norm;
    case Field::kKNorm: return &l.k_norm;
    case Field::kQBias: return &l.q_proj.bias_storage;
    case Field::kKBias: return &l.k_proj.bias_storage;
    case Field::kVBias: return &l.v_proj.bias_storage;
    case Field::kOBias: return &l.o_proj.bias_storage;
    default: return nullptr;
  }
}

}  // namespace

std::vector<DummyTensorSpec> dummy_tensor_specs(const ModelConfig& config) {
  std::vector<DummyTensorSpec> specs;
  for (Entry& e : entries(config)) specs.push_back(std::move(e.spec));
  return specs;
}

size_t dummy_matrix_bytes(const ModelConfig& config) {
  size_t total = 0;
  for (const Entry& e : entries(config)) {
    if (e.spec.role != DummyTensorSpec::Role::kMatrix) continue;
    total += e.spec.bytes() + static_cast<size_t>(e.spec.scale_count()) * sizeof(float);
  }
  return total;
}

void fill_dummy_tensor(const DummyTensorSpec& spec, const DummyOptions& options, void* data, float* scale) {
  Filler(options).fill(spec, data, scale);
}

void for_each_dummy_tensor(const ModelConfig& config, const DummyOptions& options,
                           const std::function<void(const DummyTensor&)>& visit) {
  const Filler filler(options);
  for (const Entry& e : entries(config)) {
    DummyStorage storage;
    void* data = storage.allocate(e.spec.bytes());
    std::vector<float> scale(static_cast<size_t>(e.spec.scale_count()));
    filler.fill(e.spec, data, scale.data());
    visit(DummyTensor{e.spec, data, scale});
  }
}

Qwen3DeviceWeights upload_dummy_qwen3_weights(ops::Backend& backend, const ModelConfig& config,
                                              const DummyOptions& options) {
  const Filler filler(options);
  Qwen3DeviceWeights out;
  out.layers.resize(static_cast<size_t>(config.num_hidden_layers));
  auto upload = [&](const void* data, size_t bytes) {
    DeviceBuffer& buffer = out.buffers.emplace_back(backend, bytes, "dummy model weights");
    backend.upload(buffer.data(), data, bytes);
    out.uploaded_bytes += bytes;
    return buffer.data();
  };
  for (const Entry& e : entries(config)) {
    const DummyTensorSpec& spec = e.spec;
    DummyStorage host;  // one tensor at a time
    void* data = host.allocate(spec.bytes());
    std::vector<float> scale(static_cast<size_t>(spec.scale_count()));
    filler.fill(spec, data, scale.data());
    const bool linear = spec.role == DummyTensorSpec::Role::kMatrix && e.field != Field::kEmbed;
    const void* device = nullptr;
    if (linear) {  // in the layout the backend's linear ops read
      DeviceBuffer& buffer = out.buffers.emplace_back(backend, spec.bytes(), "dummy model weights");
      backend.upload_linear_weight(buffer.data(), data, spec.dtype, spec.rows, spec.cols);
      out.uploaded_bytes += spec.bytes();
      device = buffer.data();
    } else {
      device = upload(data, spec.bytes());
    }
    if (spec.role == DummyTensorSpec::Role::kMatrix) {
      ops::WeightView view;
      view.data = device;
      view.dtype = spec.dtype;
      view.rows = spec.rows;
      view.cols = spec.cols;
      view.scale_kind = spec.scale_kind;
      if (!scale.empty()) view.scale = static_cast<const float*>(upload(scale.data(), scale.size() * sizeof(float)));
      out.weight_bytes += spec.bytes();
      if (e.field == Field::kEmbed) {
        out.embed_tokens = view;
        continue;
      }
      if (e.field == Field::kLmHead) {
        out.lm_head = view;
        continue;
      }
      Qwen3LayerDeviceWeights& l = out.layers.at(static_cast<size_t>(e.layer));
      switch (e.field) {
        case Field::kQ: l.q_proj = view; break;
        case Field::kK: l.k_proj = view; break;
        case Field::kV: l.v_proj = view; break;
        case Field::kO: l.o_proj = view; break;
        case Field::kGate: l.gate_proj = view; break;
        case Field::kUp: l.up_proj = view; break;
        case Field::kDown: l.down_proj = view; break;
        default: fail("internal: dummy matrix '{}' has no slot", spec.name);
      }
      continue;
    }
    const auto* values = static_cast<const float*>(device);
    if (e.field == Field::kFinalNorm) {
      out.final_norm = values;
      continue;
    }
    Qwen3LayerDeviceWeights& l = out.layers.at(static_cast<size_t>(e.layer));
    switch (e.field) {
      case Field::kInputNorm: l.input_layernorm = values; break;
      case Field::kPostNorm: l.post_attention_layernorm = values; break;
      case Field::kQNorm: l.q_norm = values; break;
      case Field::kKNorm: l.k_norm = values; break;
      case Field::kQBias: l.q_proj.bias = values; break;
      case Field::kKBias: l.k_proj.bias = values; break;
      case Field::kVBias: l.v_proj.bias = values; break;
      case Field::kOBias: l.o_proj.bias = values; break;
      default: fail("internal: dummy vector '{}' has no slot", spec.name);
    }
  }
  if (config.tie_word_embeddings) out.lm_head = out.embed_tokens;
  backend.synchronize();
  return out;
}

Qwen3Weights make_dummy_qwen3_weights(const ModelConfig& config, const DummyOptions& options) {
  const Filler filler(options);
  auto storage = std::make_shared<DummyStorage>();
  Qwen3Weights w;
  w.layers.resize(static_cast<size_t>(config.num_hidden_layers));
  for (const Entry& e : entries(config)) {
    const DummyTensorSpec& spec = e.spec;
    if (spec.role == DummyTensorSpec::Role::kMatrix) {
      HostWeight& host = *matrix_slot(w, e);
      void* data = storage->allocate(spec.bytes());
      host.scale_storage.resize(static_cast<size_t>(spec.scale_count()));
      filler.fill(spec, data, host.scale_storage.data());
      host.view.data = data;
      host.view.dtype = spec.dtype;
      host.view.rows = spec.rows;
      host.view.cols = spec.cols;
      host.view.scale_kind = spec.scale_kind;
      host.view.scale = host.scale_storage.empty() ? nullptr : host.scale_storage.data();
    } else {
      std::vector<float>& values = *vector_slot(w, e);
      values.resize(static_cast<size_t>(spec.elements()));
      filler.fill(spec, values.data(), nullptr);
    }
  }
  // Biases were generated into bias_storage; point the views at them now that no vector moves.
  for (Qwen3LayerWeights& layer : w.layers) {
    for (HostWeight* h : {&layer.q_proj, &layer.k_proj, &layer.v_proj, &layer.o_proj}) {
      if (!h->bias_storage.empty()) h->view.bias = h->bias_storage.data();
    }
  }
  if (config.tie_word_embeddings) w.lm_head.view = w.embed_tokens.view;
  w.storage = std::move(storage);
  return w;
}

}  // namespace lathe::model
