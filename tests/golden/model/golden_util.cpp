#include "golden_util.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/error.h"
#include "io/safetensors.h"
#include "model/config.h"
#include "model/weights.h"

namespace lathe::golden {

namespace {

// The fixtures directory: LATHE_FIXTURES_DIR from the environment when set (a binary built in
// one checkout and run in another, e.g. on the device machine), else the one compiled in.
std::filesystem::path fixtures_root() {
  const char* env = std::getenv("LATHE_FIXTURES_DIR");
  return std::filesystem::path(env != nullptr && *env != '\0' ? env : LATHE_FIXTURES_DIR);
}

}  // namespace

std::filesystem::path fixture_dir(const std::string& name) { return fixtures_root() / "models" / name; }

std::string fixture_test_name(const ::testing::TestParamInfo<std::string>& param) {
  std::string name = param.param;
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  const std::filesystem::path root = fixtures_root() / "models";
  if (!std::filesystem::exists(root)) return names;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "reference.safetensors")) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

std::vector<int32_t> read_i32(const io::SafetensorsFile& file, const std::string& name) {
  const io::TensorInfo* t = file.find(name);
  if (t == nullptr || t->dtype != DType::kI32) fail("{}: I32 tensor '{}' missing", file.path().string(), name);
  std::vector<int32_t> out(static_cast<size_t>(t->numel()));
  if (!out.empty()) std::memcpy(out.data(), t->data, out.size() * sizeof(int32_t));
  return out;
}

std::vector<float> read_floats(const io::SafetensorsFile& file, const std::string& name) {
  const io::TensorInfo* t = file.find(name);
  if (t == nullptr) fail("{}: tensor '{}' missing", file.path().string(), name);
  return io::read_f32(*t);
}

}  // namespace

Reference load_reference(const std::filesystem::path& dir) {
  const auto file = io::SafetensorsFile::open(dir / "reference.safetensors");
  Reference ref;
  ref.prompt = read_i32(*file, "prompt_ids");
  ref.logits = read_floats(*file, "logits");
  ref.greedy = read_i32(*file, "greedy_ids");
  ref.greedy_logits = read_floats(*file, "greedy_logits");
  ref.greedy_margins = read_floats(*file, "greedy_margins");
  const io::TensorInfo* logits = file->find("logits");
  ref.vocab = logits->shape.at(1);
  return ref;
}

ErrorStats compare(const std::vector<float>& got, const std::vector<float>& ref) {
  if (got.size() != ref.size()) fail("compare: {} values vs {} reference values", got.size(), ref.size());
  ErrorStats stats;
  for (size_t i = 0; i < got.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(got[i]) - static_cast<double>(ref[i]));
    stats.max_abs = std::isnan(diff) ? INFINITY : std::max(stats.max_abs, diff);
    stats.max_ref = std::max(stats.max_ref, std::fabs(static_cast<double>(ref[i])));
  }
  return stats;
}

int64_t count_bit_differences(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return static_cast<int64_t>(std::max(a.size(), b.size()));
  int64_t count = 0;
  for (size_t i = 0; i < a.size(); ++i) count += std::memcmp(&a[i], &b[i], sizeof(float)) != 0 ? 1 : 0;
  return count;
}

DirectModel::DirectModel(const std::filesystem::path& dir, int32_t max_tokens, int32_t num_blocks, DType kv_dtype,
                         int32_t block_size) {
  model::ModelConfig config = model::load_model_config(dir);
  model::Qwen3Weights weights = model::load_qwen3_weights(config);
  backend = ops::make_cpu_backend();
  model::Qwen3Options options;
  options.max_tokens_per_step = max_tokens;
  options.max_logits_rows = max_tokens;
  options.num_kv_blocks = num_blocks;
  options.kv_block_size = block_size;
  options.kv_dtype = kv_dtype;
  model = std::make_unique<model::Qwen3Model>(*backend, std::move(config), std::move(weights), options);
  blocks = std::make_unique<engine::BlockManager>(num_blocks, block_size);
}

std::vector<float> DirectModel::run(const ops::ForwardBatch& batch) {
  const int64_t rows = static_cast<int64_t>(batch.logits_rows.size());
  const int64_t vocab = model->vocab_size();
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(rows, 1) * vocab) * sizeof(float);
  model::DeviceBuffer buffer(*backend, bytes, "test logits");
  ops::Act logits{buffer.data(), DType::kF32, rows, vocab, vocab};
  model->forward(batch, logits);
  std::vector<float> out(static_cast<size_t>(rows * vocab));
  backend->download(out.data(), buffer.data(), out.size() * sizeof(float));
  return out;
}

}  // namespace lathe::golden
