// Target declarations (target/target.h): the shipped files parse and say what the issue asks;
// the embedded copies equal the files; a strict schema whose errors name the file and key; device
// matching; the SM-count warning; the boot line with environment marks.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <unistd.h>

#include "core/error.h"
#include "target/target.h"

namespace lathe::target {
namespace {

namespace fs = std::filesystem;

const fs::path kTargetsDir = fs::path(LATHE_SOURCE_DIR) / "targets";

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const char* kMinimal = R"(
[hardware]
name = "Test part"
arch = "sm_90a"
sm_count = 100
memory_bandwidth_gbs = 1000
memory_gb = 10.5
device_match = ["TESTPART"]
[defaults]
attn_decode_splitk = "auto"
attn_decode_gqa_pack = false
attn_decode_split_slices = "off"
ffn_batch16 = true
ffn_gemv_max_m = 32
)";

std::vector<TargetDecl> shipped() {
  std::vector<TargetDecl> out;
  for (const fs::directory_entry& entry : fs::directory_iterator(kTargetsDir)) {
    if (entry.path().extension() == ".toml") {
      out.push_back(parse_target(read(entry.path()), entry.path().stem().string(), entry.path().string()));
    }
  }
  return out;
}

// The message of the lathe::Error `fn` throws ("" if it throws none).
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

EnvLookup env_of(std::map<std::string, std::string> values) {
  return [values](const char* name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

TEST(TargetFiles, ShippedDeclarationsParseWithTheIssueSmCounts) {
  std::map<std::string, TargetDecl> by_id;
  for (TargetDecl& decl : shipped()) by_id[decl.id] = decl;
  const std::map<std::string, int32_t> expected = {{"h100", 132}, {"h200", 132}, {"b200", 148},
                                                   {"gb10", 48},  {"a100", 108}, {"generic", 0}};
  for (const auto& [id, sms] : expected) {
    ASSERT_TRUE(by_id.count(id)) << id;
    EXPECT_EQ(by_id[id].hardware.sm_count, sms) << id;
    // Every shipped default is a spelling the grammar accepts (none falls to legacy by accident).
    EXPECT_TRUE(parse_splitk_policy(by_id[id].defaults.attn_decode_splitk).has_value()) << id;
  }
}

TEST(TargetFiles, EmbeddedCopiesEqualTheFiles) {
  const auto& embedded = embedded_target_files();
  size_t on_disk = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(kTargetsDir)) {
    if (entry.path().extension() == ".toml") ++on_disk;
  }
  EXPECT_EQ(embedded.size(), on_disk);
  for (const auto& [file, text] : embedded) EXPECT_EQ(text, read(kTargetsDir / file)) << file;
}

TEST(TargetFiles, UnknownKeysAreErrorsNamingFileAndKey) {
  std::string text = kMinimal;
  std::string bad = text;
  bad.insert(bad.find("[defaults]"), "sm_cuont = 3\n");
  std::string msg = error_of([&] { parse_target(bad, "x", "targets/x.toml"); });
  EXPECT_NE(msg.find("targets/x.toml"), std::string::npos) << msg;
  EXPECT_NE(msg.find("hardware.sm_cuont"), std::string::npos) << msg;

  bad = text + "attn_decode_split = \"auto\"\n";
  msg = error_of([&] { parse_target(bad, "x", "targets/x.toml"); });
  EXPECT_NE(msg.find("defaults.attn_decode_split"), std::string::npos) << msg;

  bad = text + "[extras]\nfoo = 1\n";
  msg = error_of([&] { parse_target(bad, "x", "targets/x.toml"); });
  EXPECT_NE(msg.find("'extras'"), std::string::npos) << msg;
}

TEST(TargetFiles, MissingKeysWrongTypesAndSyntaxAreErrors) {
  const std::string text = kMinimal;
  auto without = [&](const std::string& line) {
    std::string out = text;
    out.erase(out.find(line), line.size());
    return out;
  };
  std::string msg = error_of([&] { parse_target(without("ffn_batch16 = true\n"), "x", "x.toml"); });
  EXPECT_NE(msg.find("missing key 'defaults.ffn_batch16'"), std::string::npos) << msg;
  msg = error_of([&] { parse_target(without("sm_count = 100\n") + "", "x", "x.toml"); });
  EXPECT_NE(msg.find("hardware.sm_count"), std::string::npos) << msg;

  std::string bad = text;
  bad.replace(bad.find("sm_count = 100"), 14, "sm_count = \"100\"");
  msg = error_of([&] { parse_target(bad, "x", "x.toml"); });
  EXPECT_NE(msg.find("'hardware.sm_count' must be an integer"), std::string::npos) << msg;

  bad = text;
  bad.replace(bad.find("ffn_gemv_max_m = 32"), 19, "ffn_gemv_max_m = 33");
  msg = error_of([&] { parse_target(bad, "x", "x.toml"); });
  EXPECT_NE(msg.find("defaults.ffn_gemv_max_m"), std::string::npos) << msg;

  msg = error_of([&] { parse_target("[hardware\nname=1", "x", "x.toml"); });
  EXPECT_NE(msg.find("x.toml"), std::string::npos) << msg;
}

TEST(TargetFiles, SplitkAcceptsIntegersAndKeepsUnparseableSpellings) {
  std::string text = kMinimal;
  text.replace(text.find("attn_decode_splitk = \"auto\""), 27, "attn_decode_splitk = 6");
  EXPECT_EQ(parse_target(text, "x", "x.toml").defaults.attn_decode_splitk, "6");
  text = kMinimal;
  text.replace(text.find("attn_decode_splitk = \"auto\""), 27, "attn_decode_splitk = \"fast\"");
  const TargetDecl decl = parse_target(text, "x", "x.toml");
  const ResolvedTarget resolved = resolve_target({decl}, std::string("x"), std::nullopt, env_of({}));
  EXPECT_EQ(resolved.levers.attn_decode_splitk.value, SplitkPolicy::legacy());
  ASSERT_EQ(resolved.notes.size(), 1u);
  EXPECT_NE(resolved.notes[0].find("fast"), std::string::npos);
}

TEST(TargetSelection, DeviceNameChoosesTheDeclaration) {
  const std::vector<TargetDecl> targets = shipped();
  auto chosen = [&](const char* device, int32_t sms) {
    return resolve_target(targets, std::nullopt, DeviceInfo{device, sms}, env_of({})).decl.id;
  };
  EXPECT_EQ(chosen("NVIDIA H200", 132), "h200");
  EXPECT_EQ(chosen("NVIDIA H100 80GB HBM3", 132), "h100");
  EXPECT_EQ(chosen("NVIDIA B200", 148), "b200");
  EXPECT_EQ(chosen("NVIDIA GB10", 48), "gb10");
  EXPECT_EQ(chosen("NVIDIA A100-SXM4-80GB", 108), "a100");
  EXPECT_EQ(chosen("NVIDIA GeForce RTX 4090", 128), "generic");
  EXPECT_EQ(resolve_target(targets, std::nullopt, std::nullopt, env_of({})).decl.id, "generic");
  // --target wins over the device, case-insensitively.
  EXPECT_EQ(resolve_target(targets, std::string("H100"), DeviceInfo{"NVIDIA H200", 132}, env_of({})).decl.id, "h100");
  const std::string msg = error_of([&] { resolve_target(targets, std::string("h300"), std::nullopt, env_of({})); });
  EXPECT_NE(msg.find("--target h300"), std::string::npos) << msg;
  EXPECT_NE(msg.find("h200"), std::string::npos) << msg;
}

TEST(TargetSelection, SmCountDisagreementWarnsAndKeepsTheDeclaration) {
  const std::vector<TargetDecl> targets = shipped();
  ResolvedTarget resolved = resolve_target(targets, std::nullopt, DeviceInfo{"NVIDIA H100 PCIe", 114}, env_of({}));
  EXPECT_EQ(resolved.decl.id, "h100");
  EXPECT_EQ(resolved.decl.hardware.sm_count, 132);
  ASSERT_EQ(resolved.notes.size(), 1u);
  EXPECT_NE(resolved.notes[0].find("132"), std::string::npos);
  EXPECT_NE(resolved.notes[0].find("114"), std::string::npos);
  resolved = resolve_target(targets, std::nullopt, DeviceInfo{"NVIDIA H200", 132}, env_of({}));
  EXPECT_TRUE(resolved.notes.empty());
}

TEST(TargetSelection, GenericTakesTheDriverSmCount) {
  const std::vector<TargetDecl> targets = shipped();
  ResolvedTarget resolved = resolve_target(targets, std::nullopt, DeviceInfo{"Some GPU", 84}, env_of({}));
  EXPECT_EQ(resolved.decl.id, "generic");
  EXPECT_EQ(resolved.decl.hardware.sm_count, 84);
  resolved = resolve_target(targets, std::nullopt, std::nullopt, env_of({}));
  EXPECT_EQ(resolved.decl.hardware.sm_count, 1);
}

TEST(BootLine, ReportsDeclarationsAndMarksTheEnvironment) {
  const std::vector<TargetDecl> targets = shipped();
  ResolvedTarget resolved = resolve_target(targets, std::string("h200"), std::nullopt, env_of({}));
  EXPECT_EQ(boot_line(resolved),
            "target defaults (h200): attn_decode_splitk=auto attn_decode_gqa_pack=on attn_decode_split_slices=auto "
            "ffn_batch16=on ffn_gemv_max_m=32");
  resolved = resolve_target(targets, std::string("h200"), std::nullopt,
                            env_of({{"LATHE_ATTN_DECODE_SPLITK", " Legacy "},
                                    {"LATHE_ATTN_DECODE_GQA_PACK", "yes"},
                                    {"LATHE_ATTN_DECODE_SPLIT_SLICES", "Off"},
                                    {"LATHE_FFN_BATCH16", "0"},
                                    {"LATHE_FFN_GEMV_MAX_M", "sixteen"}}));
  EXPECT_EQ(boot_line(resolved),
            "target defaults (h200): attn_decode_splitk=legacy (env) attn_decode_gqa_pack=on (env) "
            "attn_decode_split_slices=1 (env) ffn_batch16=off (env) ffn_gemv_max_m=32");
  ASSERT_EQ(resolved.notes.size(), 1u);
  EXPECT_NE(resolved.notes[0].find("LATHE_FFN_GEMV_MAX_M"), std::string::npos);
  // The h100 declaration slices FP8 KV caches only, by auto's rule but into two slices at most.
  resolved = resolve_target(targets, std::string("h100"), std::nullopt, env_of({}));
  EXPECT_EQ(resolved.levers.attn_decode_split_slices.value, SplitSlices(1, -2));
  EXPECT_NE(boot_line(resolved).find("attn_decode_split_slices=fp8:auto:2 "), std::string::npos)
      << boot_line(resolved);
}

TEST(TargetLoading, EnvironmentDirectoryOverridesAndMustExist) {
  const fs::path dir = fs::temp_directory_path() / ("lathe_targets_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "generic.toml") << kMinimal;
  std::ofstream(dir / "mine.toml") << kMinimal;
  ::setenv("LATHE_TARGETS_DIR", dir.c_str(), 1);
  std::vector<TargetDecl> loaded = load_targets();
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0].id, "generic");
  EXPECT_EQ(loaded[1].id, "mine");
  EXPECT_EQ(loaded[1].hardware.sm_count, 100);

  ::setenv("LATHE_TARGETS_DIR", (dir / "missing").c_str(), 1);
  EXPECT_NE(error_of([] { load_targets(); }).find("LATHE_TARGETS_DIR"), std::string::npos);
  ::unsetenv("LATHE_TARGETS_DIR");
  fs::remove_all(dir);
  // Without the override, the source tree's declarations (or the embedded copies) load.
  loaded = load_targets();
  EXPECT_GE(loaded.size(), 6u);
}

}  // namespace
}  // namespace lathe::target
