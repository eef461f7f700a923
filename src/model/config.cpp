// config.json / generation_config.json parsing (spec sections 2 and 5) and the RoPE tables.
// Defaults are those of transformers' Qwen3Config; the few places lathe differs are noted.
#include "model/config.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "core/error.h"
#include "io/json_util.h"

namespace lathe::model {
namespace {

using io::Json;

// Families lathe knows by name but has not implemented yet.
constexpr std::string_view kNotYetSupported[] = {"qwen3_moe", "qwen3_next", "qwen3_5", "qwen3_5_moe", "qwen3_5_text",
                                                 "qwen3_5_moe_text"};

int64_t positive_int(const Json& root, std::string_view key, int64_t fallback, const std::string& where) {
  const int64_t value = io::json_int(root, key, where).value_or(fallback);
  if (value <= 0) fail("{}: field '{}' must be positive, got {}", where, key, value);
  return value;
}

// An int or a list of ints (eos_token_id); empty when absent or null.
std::vector<int32_t> token_id_list(const Json& root, std::string_view key, const std::string& where) {
  auto it = root.find(key);
  if (it == root.end() || it->is_null()) return {};
  std::vector<int32_t> ids;
  auto add = [&](const Json& value) {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > INT32_MAX) {
      fail("{}: field '{}' must be a token id or a list of token ids, got {}", where, key, it->dump(-1, ' ', true));
    }
    ids.push_back(static_cast<int32_t>(value.get<int64_t>()));
  };
  if (it->is_array()) {
    for (const Json& value : *it) add(value);
  } else {
    add(*it);
  }
  return ids;
}

std::vector<std::string> string_list(const Json& object, std::string_view key, const std::string& where) {
  std::vector<std::string> out;
  const Json* list = io::json_array(object, key, where);
  if (list == nullptr) return out;
  for (const Json& value : *list) {
    if (!value.is_string()) fail("{}: field '{}' must be a list of strings, got {}", where, key, io::json_type_name(value));
    out.push_back(value.get<std::string>());
  }
  return out;
}

// rope_theta, partial_rotary_factor and rope_scaling / rope_parameters, resolved as HF's
// RotaryEmbeddingConfigMixin does: a non-empty rope_scaling replaces rope_parameters; values
// inside the dict win over top-level keys.
void parse_rope(const Json& root, const std::string& source, ModelConfig& config) {
  const Json* scaling = io::json_object(root, "rope_scaling", source);
  const Json* parameters = io::json_object(root, "rope_parameters", source);
  const bool use_scaling = scaling != nullptr && !scaling->empty();
  const Json empty = Json::object();
  const Json& dict = use_scaling ? *scaling : (parameters != nullptr ? *parameters : empty);
  const std::string where = source + (use_scaling ? ": rope_scaling" : ": rope_parameters");

  // HF's default when neither place sets it (PreTrainedConfig.default_theta); released Qwen3
  // checkpoints all set 1e6 explicitly.
  config.rope_theta = io::json_number(dict, "rope_theta", where)
                          .value_or(io::json_number(root, "rope_theta", source).value_or(10000.0));
  if (!(config.rope_theta > 1.0)) fail("{}: rope_theta must be > 1, got {}", where, config.rope_theta);
  config.partial_rotary_factor =
      io::json_number(dict, "partial_rotary_factor", where)
          .value_or(io::json_number(root, "partial_rotary_factor", source).value_or(1.0));
  if (!(config.partial_rotary_factor > 0.0 && config.partial_rotary_factor <= 1.0)) {
    fail("{}: partial_rotary_factor must be in (0, 1], got {}", where, config.partial_rotary_factor);
  }

  RopeScaling& rope = config.rope_scaling;
  rope.type = io::json_string(dict, "rope_type", where).value_or(io::json_string(dict, "type", where).value_or("default"));
  const std::optional<double> factor = io::json_number(dict, "factor", where);
  if (rope.type == "default") {
    return;
  }
  if (rope.type == "linear" || rope.type == "dynamic") {
    if (!factor) fail("{}: rope type '{}' needs field 'factor'", where, rope.type);
    if (!(*factor > 0.0)) fail("{}: field 'factor' must be positive, got {}", where, *factor);
    rope.factor = *factor;
    return;
  }
  if (rope.type != "yarn") {
    fail("{}: rope type '{}' is not supported (supported: default, linear, dynamic, yarn)", where, rope.type);
  }
  // A top-level original_max_position_embeddings takes priority (HF's standardize_rope_params),
  // then the dict's, then max_position_embeddings.
  rope.original_max_position_embeddings =
      io::json_int(root, "original_max_position_embeddings", source)
          .value_or(io::json_int(dict, "original_max_position_embeddings", where).value_or(config.max_position_embeddings));
  if (rope.original_max_position_embeddings <= 0) {
    fail("{}: original_max_position_embeddings must be positive, got {}", where, rope.original_max_position_embeddings);
  }
  // HF: a null factor is max_position_embeddings / original_max_position_embeddings.
  rope.factor = factor.value_or(static_cast<double>(config.max_position_embeddings) /
                                static_cast<double>(rope.original_max_position_embeddings));
  if (!(rope.factor > 0.0)) fail("{}: field 'factor' must be positive, got {}", where, rope.factor);
  rope.attention_factor = io::json_number(dict, "attention_factor", where);
  rope.mscale = io::json_number(dict, "mscale", where);
  rope.mscale_all_dim = io::json_number(dict, "mscale_all_dim", where);
  // HF uses `get(...) or default`, so 0 also means the default.
  const double beta_fast = io::json_number(dict, "beta_fast", where).value_or(0.0);
  const double beta_slow = io::json_number(dict, "beta_slow", where).value_or(0.0);
  rope.beta_fast = beta_fast != 0.0 ? beta_fast : 32.0;
  rope.beta_slow = beta_slow != 0.0 ? beta_slow : 1.0;
  rope.truncate = io::json_bool(dict, "truncate", where).value_or(true);
}

void parse_fp8(const Json& quant, const std::string& where, QuantConfig& out) {
  const std::optional<std::string> fmt = io::json_string(quant, "fmt", where);
  if (fmt && *fmt != "e4m3") fail("{}: fp8 fmt '{}' is not supported (only e4m3)", where, *fmt);
  auto block = quant.find("weight_block_size");
  if (block != quant.end()) {
    // HF reads null as per-tensor FP8; lathe supports Qwen's 128x128 blocks only.
    if (!block->is_array() || *block != Json::array({128, 128})) {
      fail("{}: weight_block_size {} is not supported (only [128, 128])", where, block->dump(-1, ' ', true));
    }
  }
  out.method = QuantConfig::Method::kFp8Block;
  out.weight_block_size = {128, 128};
  out.ignore = string_list(quant, "modules_to_not_convert", where);
}

void parse_compressed_tensors(const Json& quant, const std::string& where, QuantConfig& out) {
  const std::optional<std::string> format = io::json_string(quant, "format", where);
  if (format && *format != "float-quantized") {
    fail("{}: compressed-tensors format '{}' is not supported (only float-quantized)", where, *format);
  }
  const Json* groups = io::json_object(quant, "config_groups", where);
  if (groups == nullptr || groups->empty()) fail("{}: compressed-tensors needs a non-empty 'config_groups'", where);
  for (const auto& [name, group] : groups->items()) {
    const std::string group_where = where + ": config_groups." + name;
    const std::optional<std::string> group_format = io::json_string(group, "format", group_where);
    if (group_format && *group_format != "float-quantized") {
      fail("{}: format '{}' is not supported (only float-quantized)", group_where, *group_format);
    }
    if (!format && !group_format) fail("{}: no 'format' (expected float-quantized)", group_where);
    const Json* weights = io::json_object(group, "weights", group_where);
    if (weights == nullptr) fail("{}: missing field 'weights'", group_where);
    const std::string weights_where = group_where + ".weights";
    const std::optional<std::string> type = io::json_string(*weights, "type", weights_where);
    if (type && *type != "float") fail("{}: type '{}' is not supported (only float)", weights_where, *type);
    const std::optional<int64_t> bits = io::json_int(*weights, "num_bits", weights_where);
    if (bits && *bits != 8) fail("{}: num_bits {} is not supported (only 8)", weights_where, *bits);
    const std::optional<std::string> strategy = io::json_string(*weights, "strategy", weights_where);
    if (!strategy) fail("{}: missing field 'strategy'", weights_where);
    if (*strategy != "channel" && *strategy != "tensor" && *strategy != "block") {
      fail("{}: strategy '{}' is not supported (supported: channel, tensor, block)", weights_where, *strategy);
    }
    if (*strategy == "block") {
      const Json* block = io::json_array(*weights, "block_structure", weights_where);
      if (block != nullptr && *block != Json::array({128, 128})) {
        fail("{}: block_structure {} is not supported (only [128, 128])", weights_where, block->dump(-1, ' ', true));
      }
      out.weight_block_size = {128, 128};
    }
    if (!out.strategy.empty() && out.strategy != *strategy) {
      fail("{}: strategy '{}' differs from another group's '{}' (mixed strategies are not supported)", weights_where,
           *strategy, out.strategy);
    }
    out.strategy = *strategy;
  }
  out.method = QuantConfig::Method::kCompressedTensors;
  out.ignore = string_list(quant, "ignore", where);
}

void parse_quant(const Json& root, const std::string& source, QuantConfig& out) {
  const Json* quant = io::json_object(root, "quantization_config", source);
  if (quant == nullptr) return;
  const std::string where = source + ": quantization_config";
  const std::optional<std::string> method = io::json_string(*quant, "quant_method", where);
  if (!method) fail("{}: missing field 'quant_method'", where);
  if (*method == "fp8") {
    parse_fp8(*quant, where, out);
  } else if (*method == "compressed-tensors") {
    parse_compressed_tensors(*quant, where, out);
  } else {
    fail("{}: quant_method '{}' is not supported (supported: fp8, compressed-tensors)", where, *method);
  }
}

}  // namespace

ModelConfig parse_model_config(const std::string& json_text, const std::string& source) {
  const Json root = io::parse_json(json_text, source);
  if (!root.is_object()) fail("{}: must be a JSON object, got {}", source, io::json_type_name(root));
  ModelConfig config;

  const std::optional<std::string> model_type = io::json_string(root, "model_type", source);
  if (!model_type) fail("{}: missing field 'model_type'", source);
  config.model_type = *model_type;
  if (std::find(std::begin(kNotYetSupported), std::end(kNotYetSupported), config.model_type) !=
      std::end(kNotYetSupported)) {
    fail("{}: model_type '{}' is not supported yet (lathe implements qwen3 dense only so far)", source,
         config.model_type);
  }
  if (config.model_type != "qwen3") {
    fail("{}: model_type '{}' is not supported (supported: qwen3)", source, config.model_type);
  }
  const std::vector<std::string> architectures = string_list(root, "architectures", source);
  if (!architectures.empty()) config.architecture = architectures.front();
  // The VLM classes keep the text model under model.language_model. (spec section 1).
  if (config.architecture.find("ForConditionalGeneration") != std::string::npos) {
    config.weight_prefix = "model.language_model.";
  }

  // Qwen3Config defaults.
  config.vocab_size = positive_int(root, "vocab_size", 151936, source);
  config.hidden_size = positive_int(root, "hidden_size", 4096, source);
  config.intermediate_size = positive_int(root, "intermediate_size", 22016, source);
  config.num_hidden_layers = positive_int(root, "num_hidden_layers", 32, source);
  config.num_attention_heads = positive_int(root, "num_attention_heads", 32, source);
  config.num_key_value_heads = positive_int(root, "num_key_value_heads", config.num_attention_heads, source);
  // Always read: Qwen3 head_dim is not hidden/heads. When absent lathe takes hidden/heads
  // (HF's Qwen3Config would take 128; released configs always set it).
  config.head_dim = positive_int(root, "head_dim", config.hidden_size / config.num_attention_heads, source);
  config.max_position_embeddings = positive_int(root, "max_position_embeddings", 32768, source);
  config.rms_norm_eps = io::json_number(root, "rms_norm_eps", source).value_or(1e-6);
  if (!(config.rms_norm_eps > 0.0)) fail("{}: field 'rms_norm_eps' must be positive, got {}", source, config.rms_norm_eps);
  config.attention_bias = io::json_bool(root, "attention_bias", source).value_or(false);
  config.tie_word_embeddings = io::json_bool(root, "tie_word_embeddings", source).value_or(false);
  config.torch_dtype = io::json_string(root, "torch_dtype", source)
                           .value_or(io::json_string(root, "dtype", source).value_or("bfloat16"));

  const std::string act = io::json_string(root, "hidden_act", source).value_or("silu");
  if (act != "silu") fail("{}: hidden_act '{}' is not supported (Qwen3 uses silu)", source, act);
  if (io::json_bool(root, "use_sliding_window", source).value_or(false)) {
    fail("{}: use_sliding_window=true is not supported (released Qwen3 checkpoints do not use it)", source);
  }
  if (config.num_attention_heads % config.num_key_value_heads != 0) {
    fail("{}: num_attention_heads {} is not a multiple of num_key_value_heads {}", source, config.num_attention_heads,
         config.num_key_value_heads);
  }

  parse_rope(root, source, config);
  const int64_t rotary = config.rotary_dim();
  if (rotary < 2 || rotary % 2 != 0) {
    fail("{}: rotary dimension head_dim * partial_rotary_factor = {} must be even and >= 2", source, rotary);
  }
  parse_quant(root, source, config.quant);
  config.eos_token_ids = token_id_list(root, "eos_token_id", source);
  return config;
}

ModelConfig load_model_config(const std::filesystem::path& dir) {
  const std::filesystem::path config_path = dir / "config.json";
  std::error_code error;
  if (!std::filesystem::is_regular_file(config_path, error)) fail("{}: config.json not found", dir.string());
  ModelConfig config = parse_model_config(io::read_text_file(config_path), config_path.string());
  config.dir = dir;
  const std::filesystem::path generation_path = dir / "generation_config.json";
  if (std::filesystem::is_regular_file(generation_path, error)) {
    const Json generation = io::read_json_file(generation_path);
    if (!generation.is_object()) {
      fail("{}: must be a JSON object, got {}", generation_path.string(), io::json_type_name(generation));
    }
    std::vector<int32_t> eos = token_id_list(generation, "eos_token_id", generation_path.string());
    if (!eos.empty()) config.eos_token_ids = std::move(eos);
  }
  return config;
}

}  // namespace lathe::model

namespace lathe::model {
namespace {

// yarn's attention-scaling rule (HF get_mscale): 0.1 * m * ln(s) + 1 for s > 1, else 1.
double yarn_mscale(double scale, double m) { return scale <= 1.0 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; }

// The rotary dimension index whose wavelength completes `rotations` turns over `positions`
// (HF find_correction_dim), in double as Python computes it.
double yarn_correction_dim(double rotations, int64_t dim, double base, int64_t positions) {
  return (static_cast<double>(dim) * std::log(static_cast<double>(positions) / (rotations * 2.0 * M_PI))) /
         (2.0 * std::log(base));
}

}  // namespace

// inv_freq follows transformers' rope init functions operation by operation in float32
// (exponent 2i/r as a float division, reciprocal, /factor, yarn's ramp blend), with double
// where HF uses Python floats. theta^e is computed correctly rounded (double pow, rounded to
// float); torch's CPU pow is not always correctly rounded, so a few entries can differ from
// HF's by one ulp (the unit test measures this against a transformers-generated fixture).
// dynamic: the tables HF uses for sequences up to max_position_embeddings (where dynamic NTK
// leaves theta unchanged); HF recomputes them for longer sequences, which lathe does not.
RopeTables compute_rope(const ModelConfig& config) {
  const RopeScaling& rope = config.rope_scaling;
  const int64_t dim = config.rotary_dim();
  if (dim < 2 || dim % 2 != 0) fail("rotary dimension {} must be even and >= 2", dim);
  const int64_t half = dim / 2;
  double base = config.rope_theta;
  if (rope.type == "dynamic") {
    // HF _compute_dynamic_ntk_parameters with seq_len = max_position_embeddings.
    const double seq_len = static_cast<double>(config.max_position_embeddings);
    base = base * std::pow(rope.factor * seq_len / static_cast<double>(config.max_position_embeddings) -
                               (rope.factor - 1.0),
                           static_cast<double>(dim) / static_cast<double>(dim - 2));
  }
  std::vector<float> pos_freq(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(dim);
    pos_freq[static_cast<size_t>(i)] =
        static_cast<float>(std::pow(static_cast<double>(static_cast<float>(base)), static_cast<double>(exponent)));
  }

  RopeTables tables;
  tables.inv_freq.resize(static_cast<size_t>(half));
  if (rope.type == "default" || rope.type == "dynamic" || rope.type == "linear") {
    const float factor = rope.type == "linear" ? static_cast<float>(rope.factor) : 1.0f;
    for (int64_t i = 0; i < half; ++i) {
      float value = 1.0f / pos_freq[static_cast<size_t>(i)];
      if (rope.type == "linear") value /= factor;
      tables.inv_freq[static_cast<size_t>(i)] = value;
    }
    return tables;
  }
  if (rope.type != "yarn") fail("rope type '{}' is not supported (supported: default, linear, dynamic, yarn)", rope.type);

  // yarn (HF _compute_yarn_parameters).
  const double factor = rope.factor;
  double attention_factor = 0.0;
  if (rope.attention_factor) {
    attention_factor = *rope.attention_factor;
  } else if (rope.mscale && rope.mscale_all_dim && *rope.mscale != 0.0 && *rope.mscale_all_dim != 0.0) {
    attention_factor = yarn_mscale(factor, *rope.mscale) / yarn_mscale(factor, *rope.mscale_all_dim);
  } else {
    attention_factor = yarn_mscale(factor, 1.0);
  }
  tables.attention_scaling = static_cast<float>(attention_factor);

  const int64_t original = rope.original_max_position_embeddings > 0 ? rope.original_max_position_embeddings
                                                                      : config.max_position_embeddings;
  double low = yarn_correction_dim(rope.beta_fast, dim, base, original);
  double high = yarn_correction_dim(rope.beta_slow, dim, base, original);
  if (rope.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;  // HF: prevent a zero-width ramp
  const float ramp_low = static_cast<float>(low);
  const float ramp_width = static_cast<float>(high - low);
  const float factor_f = static_cast<float>(factor);
  for (int64_t i = 0; i < half; ++i) {
    const float pos = pos_freq[static_cast<size_t>(i)];
    const float extrapolation = 1.0f / pos;
    const float interpolation = 1.0f / (factor_f * pos);
    const float ramp = std::clamp((static_cast<float>(i) - ramp_low) / ramp_width, 0.0f, 1.0f);
    const float extrapolation_weight = 1.0f - ramp;
    tables.inv_freq[static_cast<size_t>(i)] =
        interpolation * (1.0f - extrapolation_weight) + extrapolation * extrapolation_weight;
  }
  return tables;
}

}  // namespace lathe::model
