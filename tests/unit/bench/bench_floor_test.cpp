// The decode floor's byte counts (app/bench_floor.h) on small configs worked out by hand, and
// the KV bytes per token of Qwen3-8B (36 layers x 8 KV heads x 128 x K,V x 2 bytes = 144 KiB).
#include <gtest/gtest.h>

#include <filesystem>

#include "app/bench_floor.h"
#include "model/config.h"
#include "model/dummy_weights.h"

namespace lathe::app {
namespace {

model::ModelConfig config_from(const std::string& extra) {
  return model::parse_model_config(R"({"model_type":"qwen3","architectures":["Qwen3ForCausalLM"],
      "max_position_embeddings":512,)" + extra + "}",
                                   "floor/config.json");
}

TEST(BenchFloor, Bf16WithBiasUntiedAndTied) {
  const std::string shape = R"("vocab_size":200,"hidden_size":64,"intermediate_size":96,"num_hidden_layers":2,
      "num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,"attention_bias":true)";
  const model::ModelConfig untied = config_from(shape + R"(,"tie_word_embeddings":false)");
  const StepWeightBytes b = step_weight_bytes(model::make_dummy_qwen3_weights(untied));
  // Per layer: q 64x64, k 32x64, v 32x64, o 64x64 BF16 = 24576; their f32 biases 768;
  // gate/up 96x64, down 64x96 BF16 = 36864; norms (64 + 64 + 16 + 16) f32 = 640.
  const double layer = 24576 + 768 + 36864 + 640;
  EXPECT_DOUBLE_EQ(b.fixed, 2 * layer + 64 * 4 /* final norm */ + 200 * 64 * 2 /* lm_head */);
  EXPECT_DOUBLE_EQ(b.embedding_row, 64 * 2);
  EXPECT_DOUBLE_EQ(b.at_batch(3), b.fixed + 3 * 128);

  const model::ModelConfig tied = config_from(shape + R"(,"tie_word_embeddings":true)");
  const StepWeightBytes t = step_weight_bytes(model::make_dummy_qwen3_weights(tied));
  EXPECT_DOUBLE_EQ(t.fixed, b.fixed);  // the tied lm_head is the whole embedding table, once
}

TEST(BenchFloor, BlockFp8CountsCodesAndScales) {
  const model::ModelConfig c = config_from(R"("vocab_size":100,"hidden_size":256,"intermediate_size":384,
      "num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":1,"head_dim":128,
      "tie_word_embeddings":false,"quantization_config":{"quant_method":"fp8","fmt":"e4m3",
      "activation_scheme":"dynamic","weight_block_size":[128,128]})");
  const StepWeightBytes b = step_weight_bytes(model::make_dummy_qwen3_weights(c));
  // FP8 codes + f32 block scales: q 256x256 (2x2 blocks), k/v 128x256 (1x2), o 256x256,
  // gate/up 384x256 (3x2), down 256x384 (2x3); norms (256+256+128+128) f32; final norm; lm_head
  // BF16 100x256.
  const double layer = (65536 + 16) + 2 * (32768 + 8) + (65536 + 16) + 3 * (98304 + 24) + 3072;
  EXPECT_DOUBLE_EQ(b.fixed, layer + 1024 + 100 * 256 * 2);
  EXPECT_DOUBLE_EQ(b.embedding_row, 512);
}

TEST(BenchFloor, KvBytes) {
  const model::ModelConfig c = config_from(R"("vocab_size":200,"hidden_size":64,"intermediate_size":96,
      "num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16)");
  // K and V x 2 layers x 3 sequences x 10 tokens x 2 heads x 16 dims x 2 bytes.
  EXPECT_DOUBLE_EQ(decode_kv_bytes(c, 3, 10, DType::kBF16), 2.0 * 2 * 3 * 10 * 2 * 16 * 2);
  EXPECT_DOUBLE_EQ(decode_kv_bytes(c, 3, 10, DType::kF8E4M3), 2.0 * 2 * 3 * 10 * 2 * 16);
  const model::ModelConfig q8 =
      model::load_model_config(std::filesystem::path(LATHE_SOURCE_DIR) / "configs" / "Qwen3-8B");
  EXPECT_DOUBLE_EQ(decode_kv_bytes(q8, 1, 1, DType::kBF16), 144.0 * 1024);
}

TEST(BenchFloor, PrefillFlops) {
  const model::ModelConfig c = config_from(R"("vocab_size":200,"hidden_size":64,"intermediate_size":96,
      "num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16)");
  // Per token per layer: q 64x64 + k, v 32x64 each + o 64x64 + gate, up 96x64 each + down 64x96
  // = 30720 multiply-adds; 2 layers x 3 sequences x 10 tokens. lm_head 200x64 once a sequence.
  // Attention: q.k and p.v, 4 heads x 16 dims, 10 * 11 / 2 = 55 visible pairs, 2 layers x 3.
  const double linear = 2.0 * 30720 * 2 * 3 * 10;
  const double lm_head = 2.0 * 200 * 64 * 3;
  const double attention = 2.0 * 2 * 4 * 16 * 55 * 2 * 3;
  EXPECT_DOUBLE_EQ(prefill_flops(c, 3, 10), linear + lm_head + attention);
  // Qwen3-8B, one 1024-token prompt: 6.95e9 linear weights, ~14.5 TFLOP in all.
  const model::ModelConfig q8 =
      model::load_model_config(std::filesystem::path(LATHE_SOURCE_DIR) / "configs" / "Qwen3-8B");
  EXPECT_NEAR(prefill_flops(q8, 1, 1024) / 1e12, 14.55, 0.05);
}

}  // namespace
}  // namespace lathe::app
