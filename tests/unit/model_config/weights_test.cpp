// load_qwen3_weights on tiny checkpoints written with lathe's own safetensors writer: BF16
// untied/tied, sharded, attention_bias, Qwen block FP8 (BF16 scale_inv), compressed-tensors
// per-channel / per-tensor / block, and the errors for missing tensors, wrong shapes and dtypes,
// and FP8 weights without a scale.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "../io/test_util.h"
#include "core/numeric.h"
#include "io/safetensors.h"
#include "model/weights.h"

namespace lathe::model {
namespace {

using test::error_of;
using test::expect_contains;
using test::TempDir;

// Tiny Qwen3: V=16, H=8, I=130 (so FP8 blocks of the MLP are partial), 2 layers, nH=2, nKV=1,
// head_dim=4 (q rows 8, kv rows 4).
nlohmann::json tiny_config() {
  return {{"model_type", "qwen3"},  {"architectures", {"Qwen3ForCausalLM"}},
          {"vocab_size", 16},       {"hidden_size", 8},
          {"intermediate_size", 130}, {"num_hidden_layers", 2},
          {"num_attention_heads", 2}, {"num_key_value_heads", 1},
          {"head_dim", 4},          {"rope_theta", 1000000.0},
          {"max_position_embeddings", 64}, {"tie_word_embeddings", false}};
}

// The tensors of a checkpoint being built: name -> dtype, shape, raw bytes.
struct Tensor {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;
};
using TensorMap = std::map<std::string, Tensor>;

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Deterministic values exactly representable in bf16/f16/e4m3.
float value_at(int64_t i, int seed) { return static_cast<float>(((i * 5 + seed * 3) % 13) - 6) * 0.25f; }

Tensor make(DType dtype, std::vector<int64_t> shape, int seed) {
  Tensor t{dtype, shape, std::vector<std::byte>(static_cast<size_t>(numel(shape)) * dtype_size(dtype))};
  for (int64_t i = 0; i < numel(shape); ++i) {
    const float v = value_at(i, seed);
    std::byte* dst = t.bytes.data() + static_cast<size_t>(i) * dtype_size(dtype);
    if (dtype == DType::kBF16) {
      const uint16_t bits = to_bf16(v).bits;
      std::memcpy(dst, &bits, 2);
    } else if (dtype == DType::kF16) {
      const uint16_t bits = to_f16(v).bits;
      std::memcpy(dst, &bits, 2);
    } else if (dtype == DType::kF32) {
      std::memcpy(dst, &v, 4);
    } else if (dtype == DType::kF8E4M3) {
      *dst = static_cast<std::byte>(float_to_fp8_e4m3(v));
    } else {
      *dst = static_cast<std::byte>(i);
    }
  }
  return t;
}

std::vector<float> expected_values(const std::vector<int64_t>& shape, int seed) {
  std::vector<float> out(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < out.size(); ++i) out[i] = value_at(static_cast<int64_t>(i), seed);
  return out;
}

// Every tensor a tiny Qwen3 needs, BF16, seeds by insertion order.
TensorMap qwen3_tensors(bool tied, bool bias) {
  TensorMap m;
  int seed = 0;
  auto add = [&](const std::string& name, std::vector<int64_t> shape) { m[name] = make(DType::kBF16, shape, seed++); };
  add("model.embed_tokens.weight", {16, 8});
  if (!tied) add("lm_head.weight", {16, 8});
  add("model.norm.weight", {8});
  for (int i = 0; i < 2; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    add(p + "input_layernorm.weight", {8});
    add(p + "post_attention_layernorm.weight", {8});
    add(p + "self_attn.q_proj.weight", {8, 8});
    add(p + "self_attn.k_proj.weight", {4, 8});
    add(p + "self_attn.v_proj.weight", {4, 8});
    add(p + "self_attn.o_proj.weight", {8, 8});
    add(p + "self_attn.q_norm.weight", {4});
    add(p + "self_attn.k_norm.weight", {4});
    add(p + "mlp.gate_proj.weight", {130, 8});
    add(p + "mlp.up_proj.weight", {130, 8});
    add(p + "mlp.down_proj.weight", {8, 130});
    if (bias) {
      add(p + "self_attn.q_proj.bias", {8});
      add(p + "self_attn.k_proj.bias", {4});
      add(p + "self_attn.v_proj.bias", {4});
      add(p + "self_attn.o_proj.bias", {8});
    }
  }
  return m;
}

void write_checkpoint(const TempDir& dir, const TensorMap& tensors, const nlohmann::json& config) {
  std::vector<io::TensorToWrite> list;
  for (const auto& [name, t] : tensors) list.push_back({name, t.dtype, t.shape, t.bytes});
  io::write_safetensors(dir / "model.safetensors", list);
  test::write_file(dir / "config.json", config.dump());
}

Qwen3Weights load(const TempDir& dir) { return load_qwen3_weights(load_model_config(dir.path())); }

// The file a pointer is mapped from, per /proc/self/maps ("" when none): proves a view is a
// view into the mmapped checkpoint and not a copy.
std::string mapped_file_of(const void* pointer) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto address = reinterpret_cast<uintptr_t>(pointer);
  while (std::getline(maps, line)) {
    uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &begin, &end) != 2) continue;
    if (address >= begin && address < end) {
      const size_t slash = line.find('/');
      return slash == std::string::npos ? "" : line.substr(slash);
    }
  }
  return "";
}

bool same_bytes(const void* data, const Tensor& tensor) {
  return std::memcmp(data, tensor.bytes.data(), tensor.bytes.size()) == 0;
}

TEST(Qwen3Weights, Bf16UntiedViewsIntoTheMappedFile) {
  TempDir dir;
  const TensorMap tensors = qwen3_tensors(/*tied=*/false, /*bias=*/false);
  write_checkpoint(dir, tensors, tiny_config());
  const Qwen3Weights w = load(dir);
  ASSERT_NE(w.storage, nullptr);
  ASSERT_EQ(w.layers.size(), 2u);
  const std::string file = (dir / "model.safetensors").string();

  EXPECT_EQ(w.embed_tokens.view.dtype, DType::kBF16);
  EXPECT_EQ(w.embed_tokens.view.rows, 16);
  EXPECT_EQ(w.embed_tokens.view.cols, 8);
  EXPECT_EQ(mapped_file_of(w.embed_tokens.view.data), file);
  EXPECT_TRUE(same_bytes(w.embed_tokens.view.data, tensors.at("model.embed_tokens.weight")));
  EXPECT_NE(w.lm_head.view.data, w.embed_tokens.view.data);
  EXPECT_TRUE(same_bytes(w.lm_head.view.data, tensors.at("lm_head.weight")));

  const Qwen3LayerWeights& l1 = w.layers[1];
  struct Expect {
    const HostWeight* weight;
    const char* name;
    int64_t rows, cols;
  };
  for (const Expect& e : {Expect{&l1.q_proj, "self_attn.q_proj", 8, 8}, Expect{&l1.k_proj, "self_attn.k_proj", 4, 8},
                          Expect{&l1.v_proj, "self_attn.v_proj", 4, 8}, Expect{&l1.o_proj, "self_attn.o_proj", 8, 8},
                          Expect{&l1.gate_proj, "mlp.gate_proj", 130, 8}, Expect{&l1.up_proj, "mlp.up_proj", 130, 8},
                          Expect{&l1.down_proj, "mlp.down_proj", 8, 130}}) {
    SCOPED_TRACE(e.name);
    const ops::WeightView& v = e.weight->view;
    EXPECT_EQ(v.dtype, DType::kBF16);
    EXPECT_EQ(v.rows, e.rows);
    EXPECT_EQ(v.cols, e.cols);
    EXPECT_EQ(v.scale_kind, ops::ScaleKind::kNone);
    EXPECT_EQ(v.scale, nullptr);
    EXPECT_EQ(v.bias, nullptr);
    EXPECT_EQ(mapped_file_of(v.data), file);
    EXPECT_TRUE(same_bytes(v.data, tensors.at(std::string("model.layers.1.") + e.name + ".weight")));
  }
  // Norms converted to f32: the bf16 values written (seeds follow qwen3_tensors' order).
  EXPECT_EQ(w.final_norm, expected_values({8}, 2));
  EXPECT_EQ(w.layers[0].input_layernorm, expected_values({8}, 3));
  EXPECT_EQ(w.layers[0].post_attention_layernorm, expected_values({8}, 4));
  EXPECT_EQ(w.layers[0].q_norm, expected_values({4}, 9));
  EXPECT_EQ(w.layers[0].k_norm, expected_values({4}, 10));
}

TEST(Qwen3Weights, TiedLmHeadIsTheEmbeddingView) {
  TempDir dir;
  auto config = tiny_config();
  config["tie_word_embeddings"] = true;
  write_checkpoint(dir, qwen3_tensors(/*tied=*/true, false), config);
  const Qwen3Weights w = load(dir);
  EXPECT_EQ(w.lm_head.view.data, w.embed_tokens.view.data);
  EXPECT_EQ(w.lm_head.view.rows, 16);
  EXPECT_EQ(w.lm_head.view.cols, 8);
  EXPECT_EQ(w.lm_head.view.dtype, DType::kBF16);
}

TEST(Qwen3Weights, ShardedCheckpointAndStorageOutlivesFiles) {
  TempDir dir;
  const TensorMap tensors = qwen3_tensors(false, false);
  std::vector<io::TensorToWrite> first, second;
  nlohmann::json weight_map;
  for (const auto& [name, t] : tensors) {
    const bool in_first = name.find("layers.1.") == std::string::npos;
    (in_first ? first : second).push_back({name, t.dtype, t.shape, t.bytes});
    weight_map[name] = in_first ? "a.safetensors" : "b.safetensors";
  }
  io::write_safetensors(dir / "a.safetensors", first);
  io::write_safetensors(dir / "b.safetensors", second);
  test::write_file(dir / "model.safetensors.index.json", nlohmann::json{{"weight_map", weight_map}}.dump());
  test::write_file(dir / "config.json", tiny_config().dump());
  Qwen3Weights w = load(dir);
  EXPECT_EQ(mapped_file_of(w.layers[0].q_proj.view.data), (dir / "a.safetensors").string());
  EXPECT_EQ(mapped_file_of(w.layers[1].q_proj.view.data), (dir / "b.safetensors").string());

  // The mappings live as long as the weights, even with the files unlinked.
  std::filesystem::remove(dir / "a.safetensors");
  std::filesystem::remove(dir / "b.safetensors");
  const Qwen3Weights moved = std::move(w);
  EXPECT_TRUE(same_bytes(moved.layers[1].down_proj.view.data, tensors.at("model.layers.1.mlp.down_proj.weight")));
  EXPECT_TRUE(same_bytes(moved.embed_tokens.view.data, tensors.at("model.embed_tokens.weight")));
}

TEST(Qwen3Weights, AttentionBiasConvertedToF32) {
  TempDir dir;
  auto config = tiny_config();
  config["attention_bias"] = true;
  TensorMap tensors = qwen3_tensors(false, /*bias=*/true);
  tensors["model.layers.0.self_attn.k_proj.bias"] = make(DType::kF32, {4}, 77);  // any float type
  write_checkpoint(dir, tensors, config);
  const Qwen3Weights w = load(dir);
  for (const HostWeight* h : {&w.layers[0].q_proj, &w.layers[0].k_proj, &w.layers[0].v_proj, &w.layers[0].o_proj}) {
    ASSERT_NE(h->view.bias, nullptr);
    EXPECT_EQ(h->view.bias, h->bias_storage.data());
    EXPECT_EQ(static_cast<int64_t>(h->bias_storage.size()), h->view.rows);
  }
  EXPECT_EQ(w.layers[0].k_proj.bias_storage, expected_values({4}, 77));
  EXPECT_EQ(w.layers[0].gate_proj.view.bias, nullptr);

  tensors.erase("model.layers.1.self_attn.o_proj.bias");
  write_checkpoint(dir, tensors, config);
  expect_contains(error_of([&] { load(dir); }), {"'model.layers.1.self_attn.o_proj.bias'", dir.path().string()});
}

// Turns every linear of `tensors` (except embeddings and lm_head) into F8_E4M3 with a scale
// tensor `scale_suffix` of the shape `scale_shape(rows, cols)` and dtype `scale_dtype`.
template <typename ShapeFn>
void make_fp8(TensorMap& tensors, const std::string& scale_suffix, DType scale_dtype, ShapeFn scale_shape) {
  int seed = 100;
  TensorMap added;
  for (auto& [name, t] : tensors) {
    const bool linear = name.find("_proj.weight") != std::string::npos;
    if (!linear) continue;
    t = make(DType::kF8E4M3, t.shape, seed++);
    const std::string prefix = name.substr(0, name.size() - std::string(".weight").size());
    added[prefix + scale_suffix] = make(scale_dtype, scale_shape(t.shape[0], t.shape[1]), seed++);
  }
  tensors.merge(added);
}

int64_t blocks(int64_t n) { return (n + 127) / 128; }

TEST(Qwen3Weights, QwenBlockFp8WithBf16ScaleInv) {
  TempDir dir;
  TensorMap tensors = qwen3_tensors(false, false);
  make_fp8(tensors, ".weight_scale_inv", DType::kBF16,
           [](int64_t n, int64_t k) { return std::vector<int64_t>{blocks(n), blocks(k)}; });
  auto config = tiny_config();
  config["quantization_config"] = {{"quant_method", "fp8"}, {"weight_block_size", {128, 128}}};
  write_checkpoint(dir, tensors, config);
  const Qwen3Weights w = load(dir);
  const HostWeight& gate = w.layers[1].gate_proj;  // [130, 8]: 2x1 blocks, the second partial
  EXPECT_EQ(gate.view.dtype, DType::kF8E4M3);
  EXPECT_EQ(gate.view.scale_kind, ops::ScaleKind::kBlock128);
  EXPECT_TRUE(same_bytes(gate.view.data, tensors.at("model.layers.1.mlp.gate_proj.weight")));
  const Tensor& scale = tensors.at("model.layers.1.mlp.gate_proj.weight_scale_inv");
  EXPECT_EQ(gate.scale_storage, io::read_f32({"s", scale.dtype, scale.shape, scale.bytes.data(), scale.bytes.size(), ""}));
  EXPECT_EQ(gate.scale_storage.size(), 2u);
  EXPECT_EQ(gate.view.scale, gate.scale_storage.data());
  const HostWeight& down = w.layers[1].down_proj;  // [8, 130]: 1x2 blocks
  EXPECT_EQ(down.view.scale_kind, ops::ScaleKind::kBlock128);
  EXPECT_EQ(static_cast<int64_t>(down.scale_storage.size()), ops::scale_count(ops::ScaleKind::kBlock128, 8, 130));
  EXPECT_EQ(w.embed_tokens.view.dtype, DType::kBF16);  // unquantized modules stay as stored
  EXPECT_EQ(w.lm_head.view.scale_kind, ops::ScaleKind::kNone);
}

TEST(Qwen3Weights, CompressedTensorsPerChannelAndPerTensor) {
  struct Case {
    const char* what;
    DType scale_dtype;
    std::vector<int64_t> (*shape)(int64_t, int64_t);
    ops::ScaleKind kind;
  };
  const Case cases[] = {
      {"channel [N,1] f32", DType::kF32, [](int64_t n, int64_t) { return std::vector<int64_t>{n, 1}; },
       ops::ScaleKind::kPerChannel},
      {"channel [N] bf16", DType::kBF16, [](int64_t n, int64_t) { return std::vector<int64_t>{n}; },
       ops::ScaleKind::kPerChannel},
      {"tensor [] f32", DType::kF32, [](int64_t, int64_t) { return std::vector<int64_t>{}; },
       ops::ScaleKind::kPerTensor},
      {"tensor [1] f16", DType::kF16, [](int64_t, int64_t) { return std::vector<int64_t>{1}; },
       ops::ScaleKind::kPerTensor},
      {"block", DType::kF32, [](int64_t n, int64_t k) { return std::vector<int64_t>{blocks(n), blocks(k)}; },
       ops::ScaleKind::kBlock128},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    TempDir dir;
    TensorMap tensors = qwen3_tensors(true, false);
    make_fp8(tensors, ".weight_scale", c.scale_dtype, c.shape);
    auto config = tiny_config();
    config["tie_word_embeddings"] = true;
    write_checkpoint(dir, tensors, config);
    const Qwen3Weights w = load(dir);
    for (const HostWeight* h : {&w.layers[0].q_proj, &w.layers[0].k_proj, &w.layers[1].up_proj, &w.layers[1].down_proj}) {
      EXPECT_EQ(h->view.dtype, DType::kF8E4M3);
      EXPECT_EQ(h->view.scale_kind, c.kind);
      EXPECT_EQ(static_cast<int64_t>(h->scale_storage.size()), ops::scale_count(c.kind, h->view.rows, h->view.cols));
      EXPECT_EQ(h->view.scale, h->scale_storage.data());
    }
    const Tensor& s = tensors.at("model.layers.0.self_attn.k_proj.weight_scale");
    EXPECT_EQ(w.layers[0].k_proj.scale_storage,
              io::read_f32({"s", s.dtype, s.shape, s.bytes.data(), s.bytes.size(), ""}));
  }
}

TEST(Qwen3WeightErrors, MissingTensor) {
  TempDir dir;
  TensorMap tensors = qwen3_tensors(false, false);
  tensors.erase("model.layers.1.mlp.up_proj.weight");
  write_checkpoint(dir, tensors, tiny_config());
  expect_contains(error_of([&] { load(dir); }), {"'model.layers.1.mlp.up_proj.weight'", dir.path().string()});
  // Untied config but no lm_head.
  tensors = qwen3_tensors(/*tied=*/true, false);
  write_checkpoint(dir, tensors, tiny_config());
  expect_contains(error_of([&] { load(dir); }), {"'lm_head.weight'", "not found"});
}

TEST(Qwen3WeightErrors, WrongShapeAndDtype) {
  TempDir dir;
  const std::string file = (dir / "model.safetensors").string();
  TensorMap tensors = qwen3_tensors(false, false);
  tensors["model.layers.0.self_attn.k_proj.weight"] = make(DType::kBF16, {5, 8}, 1);
  write_checkpoint(dir, tensors, tiny_config());
  expect_contains(error_of([&] { load(dir); }),
                  {file, "'model.layers.0.self_attn.k_proj.weight'", "[5, 8]", "expected [4, 8]"});

  tensors = qwen3_tensors(false, false);
  tensors["model.layers.1.self_attn.q_norm.weight"] = make(DType::kI32, {4}, 1);
  write_checkpoint(dir, tensors, tiny_config());
  expect_contains(error_of([&] { load(dir); }), {file, "'model.layers.1.self_attn.q_norm.weight'", "I32", "BF16"});

  tensors = qwen3_tensors(false, false);
  tensors["model.embed_tokens.weight"] = make(DType::kF8E4M3, {16, 8}, 1);
  tensors["model.embed_tokens.weight_scale_inv"] = make(DType::kF32, {1, 1}, 1);
  write_checkpoint(dir, tensors, tiny_config());
  expect_contains(error_of([&] { load(dir); }), {file, "'model.embed_tokens.weight'", "F8_E4M3"});
}

TEST(Qwen3WeightErrors, Fp8ScaleProblems) {
  TempDir dir;
  const std::string file = (dir / "model.safetensors").string();
  TensorMap tensors = qwen3_tensors(false, false);
  tensors["model.layers.0.mlp.down_proj.weight"] = make(DType::kF8E4M3, {8, 130}, 1);
  write_checkpoint(dir, tensors, tiny_config());
  expect_contains(error_of([&] { load(dir); }),
                  {file, "'model.layers.0.mlp.down_proj.weight'", "no scale", "weight_scale_inv"});

  tensors["model.layers.0.mlp.down_proj.weight_scale_inv"] = make(DType::kF32, {1, 1}, 1);  // needs [1, 2]
  write_checkpoint(dir, tensors, tiny_config());
  expect_contains(error_of([&] { load(dir); }),
                  {file, "'model.layers.0.mlp.down_proj.weight_scale_inv'", "[1, 1]", "expected [1, 2]"});

  tensors["model.layers.0.mlp.down_proj.weight_scale_inv"] = make(DType::kI8, {1, 2}, 1);
  write_checkpoint(dir, tensors, tiny_config());
  expect_contains(error_of([&] { load(dir); }), {file, "'model.layers.0.mlp.down_proj.weight_scale_inv'", "I8"});

  tensors.erase("model.layers.0.mlp.down_proj.weight_scale_inv");
  tensors["model.layers.0.mlp.down_proj.weight_scale"] = make(DType::kF32, {3}, 1);
  write_checkpoint(dir, tensors, tiny_config());
  expect_contains(error_of([&] { load(dir); }),
                  {file, "'model.layers.0.mlp.down_proj.weight_scale'", "[3]", "per-channel"});

  tensors = qwen3_tensors(false, false);
  tensors["model.layers.0.mlp.up_proj.weight_scale"] = make(DType::kF32, {130}, 1);  // beside a BF16 weight
  write_checkpoint(dir, tensors, tiny_config());
  expect_contains(error_of([&] { load(dir); }), {file, "'model.layers.0.mlp.up_proj.weight_scale'", "BF16"});
}

TEST(Qwen3WeightErrors, VocabFromConfigMustMatch) {
  TempDir dir;
  auto config = tiny_config();
  config["vocab_size"] = 32;
  write_checkpoint(dir, qwen3_tensors(false, false), config);
  expect_contains(error_of([&] { load(dir); }), {"'model.embed_tokens.weight'", "[16, 8]", "expected [32, 8]"});
}

// The tiny checkpoints under tests/fixtures/models (generated with transformers by
// tools/make_fixtures.py) must all load, with views of the config's shapes; a linear has a scale
// iff it is FP8, and a quantized config has FP8 linears (modules_to_not_convert may leave some BF16).
TEST(Qwen3Weights, LoadsTransformersWrittenFixtures) {
  const std::filesystem::path root = std::filesystem::path(LATHE_FIXTURES_DIR) / "models";
  if (!std::filesystem::is_directory(root)) GTEST_SKIP() << "no " << root;
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (!std::filesystem::exists(entry.path() / "config.json")) continue;
    SCOPED_TRACE(entry.path().string());
    const ModelConfig config = load_model_config(entry.path());
    const Qwen3Weights w = load_qwen3_weights(config);
    ASSERT_EQ(static_cast<int64_t>(w.layers.size()), config.num_hidden_layers);
    EXPECT_EQ(w.embed_tokens.view.rows, config.vocab_size);
    EXPECT_EQ(w.lm_head.view.cols, config.hidden_size);
    EXPECT_EQ(w.lm_head.view.data == w.embed_tokens.view.data, config.tie_word_embeddings);
    int fp8_linears = 0;
    for (const Qwen3LayerWeights& layer : w.layers) {
      EXPECT_EQ(layer.q_proj.view.rows, config.num_attention_heads * config.head_dim);
      EXPECT_EQ(layer.k_proj.view.rows, config.num_key_value_heads * config.head_dim);
      EXPECT_EQ(layer.q_proj.view.bias != nullptr, config.attention_bias);
      for (const HostWeight* h : {&layer.q_proj, &layer.k_proj, &layer.v_proj, &layer.o_proj, &layer.gate_proj,
                                  &layer.up_proj, &layer.down_proj}) {
        const bool fp8 = h->view.dtype == DType::kF8E4M3;
        EXPECT_EQ(h->view.scale != nullptr, fp8);
        fp8_linears += fp8 ? 1 : 0;
      }
    }
    EXPECT_EQ(fp8_linears > 0, config.quant.method != QuantConfig::Method::kNone);
    ++loaded;
  }
  if (loaded == 0) GTEST_SKIP() << "no checkpoints under " << root;
}

}  // namespace
}  // namespace lathe::model
