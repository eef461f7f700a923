#include "target/target.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"
#include "core/log.h"

namespace lathe::target {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// One [section] of a target file: checks that only the allowed keys are present and hands out
// typed values, every error naming the file and the dotted key.
class Section {
 public:
  Section(const toml::table& root, const char* name, const std::string& source) : name_(name), source_(source) {
    const toml::node* node = root.get(name);
    if (!node) fail("{}: missing section [{}]", source, name);
    table_ = node->as_table();
    if (!table_) fail("{}: '{}' must be a table", source, name);
  }

  void allow_only(std::initializer_list<const char*> keys) const {
    std::set<std::string> allowed(keys.begin(), keys.end());
    for (auto&& [key, value] : *table_) {
      (void)value;
      if (!allowed.count(std::string(key.str()))) fail("{}: unknown key '{}.{}'", source_, name_, key.str());
    }
  }

  const toml::node& required(const char* key) const {
    const toml::node* node = table_->get(key);
    if (!node) fail("{}: missing key '{}.{}'", source_, name_, key);
    return *node;
  }

  std::string string(const char* key) const {
    const toml::node& node = required(key);
    if (!node.is_string()) fail("{}: '{}.{}' must be a string", source_, name_, key);
    return *node.value<std::string>();
  }

  int64_t integer(const char* key, int64_t lo, int64_t hi) const {
    const toml::node& node = required(key);
    if (!node.is_integer()) fail("{}: '{}.{}' must be an integer", source_, name_, key);
    const int64_t value = *node.value<int64_t>();
    if (value < lo || value > hi) fail("{}: '{}.{}' = {} is outside {}..{}", source_, name_, key, value, lo, hi);
    return value;
  }

  double number(const char* key) const {
    const toml::node& node = required(key);
    if (!node.is_number()) fail("{}: '{}.{}' must be a number", source_, name_, key);
    const double value = *node.value<double>();
    if (!(value > 0)) fail("{}: '{}.{}' must be positive", source_, name_, key);
    return value;
  }

  bool boolean(const char* key) const {
    const toml::node& node = required(key);
    if (!node.is_boolean()) fail("{}: '{}.{}' must be true or false", source_, name_, key);
    return *node.value<bool>();
  }

  std::vector<std::string> strings(const char* key) const {
    const toml::node& node = required(key);
    const toml::array* array = node.as_array();
    if (!array) fail("{}: '{}.{}' must be an array of strings", source_, name_, key);
    std::vector<std::string> out;
    for (const toml::node& item : *array) {
      if (!item.is_string() || item.value<std::string>()->empty()) {
        fail("{}: '{}.{}' must hold non-empty strings", source_, name_, key);
      }
      out.push_back(*item.value<std::string>());
    }
    return out;
  }

  // A count-or-word spelling: a string, or a non-negative integer count (`words`: the accepted
  // words, for the error message).
  std::string count_spelling(const char* key, const char* words) const {
    const toml::node& node = required(key);
    if (node.is_string()) return *node.value<std::string>();
    if (node.is_integer() && *node.value<int64_t>() >= 0) return std::to_string(*node.value<int64_t>());
    fail("{}: '{}.{}' must be a string ({}) or a count", source_, name_, key, words);
  }

 private:
  const char* name_;
  const std::string& source_;
  const toml::table* table_ = nullptr;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read target file {}", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<TargetDecl> load_dir(const fs::path& dir) {
  std::vector<TargetDecl> out;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".toml") continue;
    out.push_back(parse_target(read_file(entry.path()), entry.path().stem().string(), entry.path().string()));
  }
  if (ec) fail("cannot list target directory {}: {}", dir.string(), ec.message());
  return out;
}

}  // namespace

TargetDecl parse_target(std::string_view toml_text, const std::string& id, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& error) {
    fail("{}:{}: {}", source, error.source().begin.line, error.description());
  }
  for (auto&& [key, value] : root) {
    (void)value;
    if (key.str() != "hardware" && key.str() != "defaults") fail("{}: unknown key '{}'", source, key.str());
  }
  TargetDecl decl;
  decl.id = id;
  decl.source = source;

  const Section hw(root, "hardware", source);
  hw.allow_only({"name", "arch", "sm_count", "memory_bandwidth_gbs", "memory_gb", "device_match"});
  decl.hardware.name = hw.string("name");
  decl.hardware.arch = hw.string("arch");
  decl.hardware.sm_count = static_cast<int32_t>(hw.integer("sm_count", 0, 4096));
  decl.hardware.memory_bandwidth_gbs = hw.number("memory_bandwidth_gbs");
  decl.hardware.memory_gb = hw.number("memory_gb");
  decl.hardware.device_match = hw.strings("device_match");

  const Section defaults(root, "defaults", source);
  defaults.allow_only(
      {"attn_decode_splitk", "attn_decode_gqa_pack", "attn_decode_split_slices", "ffn_batch16", "ffn_gemv_max_m"});
  decl.defaults.attn_decode_splitk = defaults.count_spelling("attn_decode_splitk", "\"legacy\", \"auto\", \"off\"");
  decl.defaults.attn_decode_gqa_pack = defaults.boolean("attn_decode_gqa_pack");
  decl.defaults.attn_decode_split_slices =
      defaults.count_spelling("attn_decode_split_slices", "\"auto\", \"off\", \"fp8:auto:2\"");
  decl.defaults.ffn_batch16 = defaults.boolean("ffn_batch16");
  decl.defaults.ffn_gemv_max_m = static_cast<int32_t>(defaults.integer("ffn_gemv_max_m", 0, kMaxFfnGemvRows));
  return decl;
}

std::vector<TargetDecl> load_targets() {
  std::vector<TargetDecl> targets;
  if (const char* dir = std::getenv("LATHE_TARGETS_DIR"); dir && *dir) {
    if (!fs::is_directory(dir)) fail("LATHE_TARGETS_DIR={} is not a directory", dir);
    targets = load_dir(dir);
    if (targets.empty()) fail("LATHE_TARGETS_DIR={} holds no *.toml target declarations", dir);
  }
#ifdef LATHE_DEFAULT_TARGETS_DIR
  if (targets.empty() && fs::is_directory(LATHE_DEFAULT_TARGETS_DIR)) targets = load_dir(LATHE_DEFAULT_TARGETS_DIR);
#endif
  if (targets.empty()) {
    for (const auto& [file, text] : embedded_target_files()) {
      targets.push_back(parse_target(text, fs::path(file).stem().string(), "embedded:" + file));
    }
  }
  std::sort(targets.begin(), targets.end(), [](const TargetDecl& a, const TargetDecl& b) { return a.id < b.id; });
  const bool has_fallback = std::any_of(targets.begin(), targets.end(), [](const TargetDecl& t) { return t.id == kFallbackTarget; });
  if (!has_fallback) fail("no '{}' target declaration among {} loaded", kFallbackTarget, targets.size());
  return targets;
}

EnvLookup process_env() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

ResolvedTarget resolve_target(const std::vector<TargetDecl>& targets, const std::optional<std::string>& requested,
                              const std::optional<DeviceInfo>& device, const EnvLookup& env) {
  auto find = [&](std::string_view id) -> const TargetDecl* {
    for (const TargetDecl& t : targets) {
      if (t.id == id) return &t;
    }
    return nullptr;
  };
  ResolvedTarget out;
  const TargetDecl* chosen = nullptr;
  if (requested) {
    chosen = find(lower(*requested));
    if (!chosen) {
      std::string known;
      for (const TargetDecl& t : targets) known += (known.empty() ? "" : ", ") + t.id;
      fail("--target {}: no such target (known: {})", *requested, known);
    }
    out.chosen_by = "--target";
  } else if (device) {
    // The longest matching substring wins, so a more specific pattern beats a shorter one.
    size_t best = 0;
    const std::string name = lower(device->name);
    for (const TargetDecl& t : targets) {
      for (const std::string& pattern : t.hardware.device_match) {
        if (pattern.size() > best && name.find(lower(pattern)) != std::string::npos) {
          best = pattern.size();
          chosen = &t;
        }
      }
    }
    out.chosen_by = chosen ? "device '" + device->name + "'" : "no match for device '" + device->name + "'";
  } else {
    out.chosen_by = "no device";
  }
  if (!chosen) chosen = find(kFallbackTarget);
  if (!chosen) fail("no '{}' target declaration", kFallbackTarget);
  out.decl = *chosen;

  if (out.decl.hardware.sm_count == 0) {
    // An undeclared part: the driver's count is the best configuration there is.
    out.decl.hardware.sm_count = device && device->sm_count > 0 ? device->sm_count : 1;
    out.notes.push_back(fmt::format("target {} declares no SM count; using {} ({})", out.decl.id,
                                    out.decl.hardware.sm_count, device ? "the driver's" : "no device"));
  } else if (device && device->sm_count > 0 && device->sm_count != out.decl.hardware.sm_count) {
    out.notes.push_back(fmt::format("target {} declares {} SMs but the driver reports {} for '{}'; the split policy "
                                    "uses the declared count",
                                    out.decl.id, out.decl.hardware.sm_count, device->sm_count, device->name));
  }
  const TargetDefaults& d = out.decl.defaults;
  auto raw = [&](const char* name) -> std::optional<std::string> { return env ? env(name) : std::nullopt; };
  auto resolve = [&](auto&& fn) {
    std::string note;
    auto lever = fn(&note);
    if (!note.empty()) out.notes.push_back(note);
    return lever;
  };
  const std::optional<std::string> splitk = raw(kEnvAttnDecodeSplitk);
  const std::optional<std::string> pack = raw(kEnvAttnDecodeGqaPack);
  const std::optional<std::string> slices = raw(kEnvAttnDecodeSplitSlices);
  const std::optional<std::string> batch16 = raw(kEnvFfnBatch16);
  const std::optional<std::string> gemv = raw(kEnvFfnGemvMaxM);
  auto view = [](const std::optional<std::string>& s) -> std::optional<std::string_view> {
    return s ? std::optional<std::string_view>(*s) : std::nullopt;
  };
  out.levers.attn_decode_splitk =
      resolve([&](std::string* n) { return resolve_splitk_policy(d.attn_decode_splitk, view(splitk), n); });
  out.levers.attn_decode_gqa_pack = resolve(
      [&](std::string* n) { return resolve_on_off_lever(kEnvAttnDecodeGqaPack, d.attn_decode_gqa_pack, view(pack), n); });
  out.levers.attn_decode_split_slices =
      resolve([&](std::string* n) { return resolve_split_slices_lever(d.attn_decode_split_slices, view(slices), n); });
  out.levers.ffn_batch16 =
      resolve([&](std::string* n) { return resolve_on_off_lever(kEnvFfnBatch16, d.ffn_batch16, view(batch16), n); });
  out.levers.ffn_gemv_max_m =
      resolve([&](std::string* n) { return resolve_gemv_max_m_lever(d.ffn_gemv_max_m, view(gemv), n); });
  return out;
}

std::string boot_line(const ResolvedTarget& resolved) {
  return fmt::format("target defaults ({}): {}", resolved.decl.id, format_levers(resolved.levers));
}

ResolvedTarget resolve_boot_target(const std::optional<std::string>& requested, const std::optional<DeviceInfo>& device) {
  ResolvedTarget resolved = resolve_target(load_targets(), requested, device, process_env());
  if (log_once("target.boot_line")) {
    for (const std::string& note : resolved.notes) spdlog::warn("{}", note);
    spdlog::info("{}", boot_line(resolved));
  }
  return resolved;
}

}  // namespace lathe::target
