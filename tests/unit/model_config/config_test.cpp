// config.json parsing: Qwen3 fields and defaults, refusals, quantization_config variants,
// generation_config.json eos ids.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../io/test_util.h"
#include "model/config.h"

namespace lathe::model {
namespace {

using nlohmann::json;
using test::error_of;
using test::expect_contains;

// Qwen3-8B's config.json (the fields lathe reads, values as released).
json qwen3_8b() {
  return json::parse(R"({
    "architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
    "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
    "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 12288,
    "max_position_embeddings": 40960, "max_window_layers": 36, "model_type": "qwen3",
    "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8,
    "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000, "sliding_window": null,
    "tie_word_embeddings": false, "torch_dtype": "bfloat16", "transformers_version": "4.51.0",
    "use_cache": true, "use_sliding_window": false, "vocab_size": 151936})");
}

ModelConfig parse(const json& config) { return parse_model_config(config.dump(), "config.json"); }

std::string parse_error(const json& config) {
  return error_of([&] { parse(config); });
}

TEST(ModelConfig, Qwen3_8B) {
  const ModelConfig config = parse(qwen3_8b());
  EXPECT_EQ(config.model_type, "qwen3");
  EXPECT_EQ(config.architecture, "Qwen3ForCausalLM");
  EXPECT_EQ(config.weight_prefix, "model.");
  EXPECT_EQ(config.vocab_size, 151936);
  EXPECT_EQ(config.hidden_size, 4096);
  EXPECT_EQ(config.intermediate_size, 12288);
  EXPECT_EQ(config.num_hidden_layers, 36);
  EXPECT_EQ(config.num_attention_heads, 32);
  EXPECT_EQ(config.num_key_value_heads, 8);
  EXPECT_EQ(config.head_dim, 128);
  EXPECT_EQ(config.max_position_embeddings, 40960);
  EXPECT_DOUBLE_EQ(config.rms_norm_eps, 1e-6);
  EXPECT_DOUBLE_EQ(config.rope_theta, 1e6);
  EXPECT_EQ(config.rope_scaling.type, "default");
  EXPECT_EQ(config.rotary_dim(), 128);
  EXPECT_FALSE(config.attention_bias);
  EXPECT_FALSE(config.tie_word_embeddings);
  EXPECT_EQ(config.torch_dtype, "bfloat16");
  EXPECT_EQ(config.quant.method, QuantConfig::Method::kNone);
  EXPECT_EQ(config.eos_token_ids, std::vector<int32_t>{151645});
}

TEST(ModelConfig, TiedEmbeddingsAndHeadDimNotHiddenOverHeads) {
  // Qwen3-0.6B: H=1024, nH=16 but head_dim 128.
  json config = qwen3_8b();
  config["hidden_size"] = 1024;
  config["num_attention_heads"] = 16;
  config["tie_word_embeddings"] = true;
  const ModelConfig parsed = parse(config);
  EXPECT_TRUE(parsed.tie_word_embeddings);
  EXPECT_EQ(parsed.head_dim, 128);
  EXPECT_EQ(parsed.rotary_dim(), 128);
}

TEST(ModelConfig, Defaults) {
  // Absent keys take Qwen3Config's defaults; head_dim absent takes hidden/heads (see config.cpp).
  const ModelConfig config = parse(json{{"model_type", "qwen3"}, {"hidden_size", 256}, {"num_attention_heads", 4}});
  EXPECT_EQ(config.vocab_size, 151936);
  EXPECT_EQ(config.intermediate_size, 22016);
  EXPECT_EQ(config.num_hidden_layers, 32);
  EXPECT_EQ(config.num_key_value_heads, 4);
  EXPECT_EQ(config.head_dim, 64);
  EXPECT_EQ(config.max_position_embeddings, 32768);
  EXPECT_DOUBLE_EQ(config.rope_theta, 10000.0);  // PreTrainedConfig.default_theta
  EXPECT_DOUBLE_EQ(config.rms_norm_eps, 1e-6);
  EXPECT_FALSE(config.tie_word_embeddings);
  EXPECT_FALSE(config.attention_bias);
  EXPECT_TRUE(config.architecture.empty());
  EXPECT_TRUE(config.eos_token_ids.empty());
}

TEST(ModelConfig, NullKvHeadsMeansAttentionHeads) {
  json config = qwen3_8b();
  config["num_key_value_heads"] = nullptr;
  EXPECT_EQ(parse(config).num_key_value_heads, 32);
}

TEST(ModelConfig, AttentionBiasAndDtypeKey) {
  json config = qwen3_8b();
  config["attention_bias"] = true;
  config.erase("torch_dtype");
  config["dtype"] = "float32";  // transformers 5 writes "dtype"
  const ModelConfig parsed = parse(config);
  EXPECT_TRUE(parsed.attention_bias);
  EXPECT_EQ(parsed.torch_dtype, "float32");
}

TEST(ModelConfig, RopeThetaInsideRopeParameters) {
  json config = qwen3_8b();
  config.erase("rope_theta");
  config["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 5000000.0}};
  const ModelConfig parsed = parse(config);
  EXPECT_DOUBLE_EQ(parsed.rope_theta, 5e6);
  EXPECT_EQ(parsed.rope_scaling.type, "default");
}

TEST(ModelConfig, RopeScalingFields) {
  json config = qwen3_8b();
  config["rope_scaling"] = {{"type", "yarn"},        {"factor", 4.0},      {"original_max_position_embeddings", 32768},
                            {"beta_fast", 16},       {"beta_slow", 0},     {"mscale", 0.5},
                            {"mscale_all_dim", 1.0}, {"truncate", false}};
  const RopeScaling rope = parse(config).rope_scaling;
  EXPECT_EQ(rope.type, "yarn");
  EXPECT_DOUBLE_EQ(rope.factor, 4.0);
  EXPECT_EQ(rope.original_max_position_embeddings, 32768);
  EXPECT_DOUBLE_EQ(rope.beta_fast, 16.0);
  EXPECT_DOUBLE_EQ(rope.beta_slow, 1.0);  // HF: `beta_slow or 1`
  EXPECT_EQ(rope.mscale, 0.5);
  EXPECT_EQ(rope.mscale_all_dim, 1.0);
  EXPECT_FALSE(rope.attention_factor.has_value());
  EXPECT_FALSE(rope.truncate);
}

TEST(ModelConfigRefusals, FamiliesNotSupportedYet) {
  for (const char* type : {"qwen3_moe", "qwen3_next", "qwen3_5", "qwen3_5_moe"}) {
    json config = qwen3_8b();
    config["model_type"] = type;
    expect_contains(parse_error(config), {"config.json", std::string("'") + type + "'", "not supported yet"});
  }
}

TEST(ModelConfigRefusals, OtherModelTypesAndMissingType) {
  json config = qwen3_8b();
  config["model_type"] = "llama";
  expect_contains(parse_error(config), {"config.json", "'llama'", "not supported"});
  config.erase("model_type");
  expect_contains(parse_error(config), {"config.json", "model_type"});
}

TEST(ModelConfigRefusals, BadValues) {
  json config = qwen3_8b();
  config["hidden_size"] = "4096";
  expect_contains(parse_error(config), {"config.json", "'hidden_size'", "integer", "string"});
  config = qwen3_8b();
  config["num_hidden_layers"] = 0;
  expect_contains(parse_error(config), {"config.json", "'num_hidden_layers'", "positive"});
  config = qwen3_8b();
  config["num_key_value_heads"] = 5;
  expect_contains(parse_error(config), {"config.json", "num_key_value_heads 5"});
  config = qwen3_8b();
  config["hidden_act"] = "gelu";
  expect_contains(parse_error(config), {"config.json", "hidden_act", "'gelu'"});
  config = qwen3_8b();
  config["rope_scaling"] = {{"rope_type", "longrope"}, {"factor", 2.0}};
  expect_contains(parse_error(config), {"config.json", "rope_scaling", "'longrope'", "not supported"});
  config = qwen3_8b();
  config["rope_scaling"] = {{"rope_type", "linear"}};
  expect_contains(parse_error(config), {"config.json", "rope_scaling", "'factor'"});
  config = qwen3_8b();
  config["tie_word_embeddings"] = 1;
  expect_contains(parse_error(config), {"config.json", "'tie_word_embeddings'", "boolean"});
  config = qwen3_8b();
  config["use_sliding_window"] = true;
  expect_contains(parse_error(config), {"config.json", "use_sliding_window"});
  expect_contains(error_of([] { parse_model_config("{\"model_type\": ", "x/config.json"); }),
                  {"x/config.json", "invalid JSON"});
  expect_contains(error_of([] { parse_model_config("[]", "x/config.json"); }), {"x/config.json", "object"});
}

TEST(ModelConfig, VlmArchitectureRecordsLanguageModelPrefix) {
  json config = qwen3_8b();
  config["architectures"] = {"Qwen3_5ForConditionalGeneration"};
  const ModelConfig parsed = parse(config);
  EXPECT_EQ(parsed.architecture, "Qwen3_5ForConditionalGeneration");
  EXPECT_EQ(parsed.weight_prefix, "model.language_model.");
}

// --- quantization_config ---

TEST(QuantConfig, QwenBlockFp8) {
  json config = qwen3_8b();
  config["quantization_config"] = {{"activation_scheme", "dynamic"},
                                   {"fmt", "e4m3"},
                                   {"quant_method", "fp8"},
                                   {"weight_block_size", {128, 128}},
                                   {"modules_to_not_convert", {"lm_head", "model.layers.0.mlp.gate"}}};
  const QuantConfig quant = parse(config).quant;
  EXPECT_EQ(quant.method, QuantConfig::Method::kFp8Block);
  EXPECT_EQ(quant.weight_block_size, (std::vector<int64_t>{128, 128}));
  EXPECT_EQ(quant.ignore, (std::vector<std::string>{"lm_head", "model.layers.0.mlp.gate"}));
}

TEST(QuantConfig, Fp8OtherBlockSizesRefused) {
  json config = qwen3_8b();
  config["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {64, 64}}};
  expect_contains(parse_error(config), {"config.json", "quantization_config", "weight_block_size [64,64]", "128"});
  config["quantization_config"]["weight_block_size"] = nullptr;
  expect_contains(parse_error(config), {"config.json", "weight_block_size null"});
  config["quantization_config"] = {{"quant_method", "fp8"}, {"fmt", "e5m2"}};
  expect_contains(parse_error(config), {"config.json", "'e5m2'"});
}

json compressed_tensors(const std::string& strategy) {
  return {{"quant_method", "compressed-tensors"},
          {"format", "float-quantized"},
          {"config_groups",
           {{"group_0",
             {{"targets", {"Linear"}},
              {"weights", {{"num_bits", 8}, {"type", "float"}, {"strategy", strategy}, {"symmetric", true}}},
              {"input_activations", {{"num_bits", 8}, {"type", "float"}, {"strategy", "token"}, {"dynamic", true}}}}}}},
          {"ignore", {"lm_head"}}};
}

TEST(QuantConfig, CompressedTensorsStrategies) {
  for (const char* strategy : {"channel", "tensor", "block"}) {
    json config = qwen3_8b();
    config["quantization_config"] = compressed_tensors(strategy);
    const QuantConfig quant = parse(config).quant;
    EXPECT_EQ(quant.method, QuantConfig::Method::kCompressedTensors) << strategy;
    EXPECT_EQ(quant.strategy, strategy);
    EXPECT_EQ(quant.ignore, std::vector<std::string>{"lm_head"});
    if (std::string(strategy) == "block") {
      EXPECT_EQ(quant.weight_block_size, (std::vector<int64_t>{128, 128}));
    }
  }
}

TEST(QuantConfig, CompressedTensorsRefusals) {
  json config = qwen3_8b();
  config["quantization_config"] = compressed_tensors("group");
  expect_contains(parse_error(config), {"config.json", "config_groups.group_0", "'group'", "not supported"});
  config["quantization_config"] = compressed_tensors("channel");
  config["quantization_config"]["format"] = "pack-quantized";
  expect_contains(parse_error(config), {"config.json", "'pack-quantized'", "not supported"});
  config["quantization_config"] = compressed_tensors("channel");
  config["quantization_config"]["config_groups"]["group_0"]["weights"]["type"] = "int";
  expect_contains(parse_error(config), {"config.json", "group_0.weights", "'int'"});
  config["quantization_config"] = compressed_tensors("channel");
  config["quantization_config"]["config_groups"]["group_1"] =
      compressed_tensors("tensor")["config_groups"]["group_0"];
  expect_contains(parse_error(config), {"config.json", "mixed strategies"});
}

TEST(QuantConfig, OtherMethodsRefusedByName) {
  json config = qwen3_8b();
  config["quantization_config"] = {{"quant_method", "awq"}, {"bits", 4}};
  expect_contains(parse_error(config), {"config.json", "quant_method 'awq'", "not supported"});
  config["quantization_config"] = {{"bits", 4}};
  expect_contains(parse_error(config), {"config.json", "quant_method"});
}

// --- config directory: generation_config.json ---

TEST(LoadModelConfig, GenerationConfigEosList) {
  test::TempDir dir;
  test::write_file(dir / "config.json", qwen3_8b().dump());
  ModelConfig config = load_model_config(dir.path());
  EXPECT_EQ(config.dir, dir.path());
  EXPECT_EQ(config.eos_token_ids, std::vector<int32_t>{151645});  // config.json's, no generation config

  test::write_file(dir / "generation_config.json", R"({"bos_token_id": 151643, "eos_token_id": [151645, 151643]})");
  config = load_model_config(dir.path());
  EXPECT_EQ(config.eos_token_ids, (std::vector<int32_t>{151645, 151643}));

  test::write_file(dir / "generation_config.json", R"({"eos_token_id": 7})");
  EXPECT_EQ(load_model_config(dir.path()).eos_token_ids, std::vector<int32_t>{7});

  test::write_file(dir / "generation_config.json", R"({"temperature": 0.6})");  // no eos: config.json's
  EXPECT_EQ(load_model_config(dir.path()).eos_token_ids, std::vector<int32_t>{151645});

  test::write_file(dir / "generation_config.json", R"({"eos_token_id": "x"})");
  expect_contains(error_of([&] { load_model_config(dir.path()); }), {"generation_config.json", "eos_token_id"});
  test::write_file(dir / "generation_config.json", "{");
  expect_contains(error_of([&] { load_model_config(dir.path()); }), {"generation_config.json", "invalid JSON"});
}

TEST(LoadModelConfig, MissingConfigNamesDirectory) {
  test::TempDir dir;
  expect_contains(error_of([&] { load_model_config(dir.path()); }), {dir.path().string(), "config.json"});
  test::write_file(dir / "config.json", R"({"model_type": "qwen3", "vocab_size": -1})");
  expect_contains(error_of([&] { load_model_config(dir.path()); }), {(dir / "config.json").string(), "vocab_size"});
}

}  // namespace
}  // namespace lathe::model
