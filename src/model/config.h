#pragma once
// config.json (+ generation_config.json) of a Hugging Face checkpoint directory, parsed into the
// fields lathe's model families need. Implemented for model_type "qwen3"; "qwen3_moe" and
// "qwen3_5" are recognised by name and refused until their families land; anything else is
// refused naming the type. Every error names the file and the field.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lathe::model {

// rope_scaling / rope_parameters ("type" is an alias of "rope_type").
struct RopeScaling {
  std::string type = "default";  // default | linear | dynamic | yarn
  double factor = 1.0;
  int64_t original_max_position_embeddings = 0;
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  std::optional<double> attention_factor;
  std::optional<double> mscale;
  std::optional<double> mscale_all_dim;
  bool truncate = true;  // yarn: floor/ceil the correction range (HF's default)
};

struct QuantConfig {
  enum class Method { kNone, kFp8Block, kCompressedTensors };
  Method method = Method::kNone;
  std::vector<int64_t> weight_block_size;  // [128, 128] for Qwen block FP8
  std::string strategy;                    // compressed-tensors: channel | tensor | block
  std::vector<std::string> ignore;         // modules_to_not_convert / ignore
};

struct ModelConfig {
  std::filesystem::path dir;
  std::string model_type;    // "qwen3"
  std::string architecture;  // architectures[0], e.g. "Qwen3ForCausalLM"
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 1e6;
  double partial_rotary_factor = 1.0;
  RopeScaling rope_scaling;
  bool attention_bias = false;
  bool tie_word_embeddings = false;
  std::string torch_dtype = "bfloat16";
  QuantConfig quant;
  std::vector<int32_t> eos_token_ids;  // generation_config.json eos_token_id, else config.json's
  std::string weight_prefix = "model.";

  int64_t rotary_dim() const { return static_cast<int64_t>(static_cast<double>(head_dim) * partial_rotary_factor); }
};

// Reads dir/config.json and, when present, dir/generation_config.json.
ModelConfig load_model_config(const std::filesystem::path& dir);
// Same from JSON text (for tests); `source` names the file in error messages.
ModelConfig parse_model_config(const std::string& json_text, const std::string& source);

// RoPE per the spec: inv_freq [rotary_dim / 2] (f32, scaled per rope_scaling) and the factor
// cos/sin are multiplied by.
struct RopeTables {
  std::vector<float> inv_freq;
  float attention_scaling = 1.0f;
};
RopeTables compute_rope(const ModelConfig& config);

}  // namespace lathe::model
