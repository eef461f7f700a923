#pragma once
// Hardware targets: what a part is (targets/<name>.toml [hardware]) and the lever values it
// declares ([defaults]); which one a process runs under (chosen from the device name or
// --target NAME); and the boot line that reports the resolved levers:
//
//   target defaults (h200): attn_decode_splitk=auto attn_decode_gqa_pack=off ffn_batch16=on ...
//
// A target file is strict: every key below is required and any other key is an error naming the
// file and the key, so a misspelt default can never be silently ignored.
//
//   [hardware]
//   name = "NVIDIA H200"            # human name
//   arch = "sm_90a"                 # the CUDA arch its kernels are built for
//   sm_count = 132                  # the split policy sizes for this, not the driver's count;
//                                   # 0 = take the driver's (the generic fallback)
//   memory_bandwidth_gbs = 4800.0   # datasheet HBM bandwidth, GB/s
//   memory_gb = 141.0
//   device_match = ["H200"]         # case-insensitive substrings of the driver's device name
//   [defaults]
//   attn_decode_splitk = "auto"     # legacy | auto | off | <count>; unparseable -> legacy
//   attn_decode_gqa_pack = false
//   attn_decode_split_slices = "off" # auto | auto:<n> | off | <n> | bf16:<cap>,fp8:<cap>
//   ffn_batch16 = true               # (split slices: unparseable -> off)
//   ffn_gemv_max_m = 32
//
// Where the declarations come from: $LATHE_TARGETS_DIR if set (it must exist), else the source
// tree's targets/ baked in at build time (LATHE_DEFAULT_TARGETS_DIR) if it exists, else copies of
// the same files embedded in the binary at build time, so an installed binary works anywhere.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "target/levers.h"

namespace lathe::target {

struct HardwareDecl {
  std::string name;
  std::string arch;
  int32_t sm_count = 0;
  double memory_bandwidth_gbs = 0;
  double memory_gb = 0;
  std::vector<std::string> device_match;
};

struct TargetDefaults {
  std::string attn_decode_splitk = "auto";  // a spelling: resolve_splitk_policy reads it
  bool attn_decode_gqa_pack = false;
  std::string attn_decode_split_slices = "off";  // a spelling: resolve_split_slices_lever reads it
  bool ffn_batch16 = true;
  int32_t ffn_gemv_max_m = kMaxFfnGemvRows;
};

struct TargetDecl {
  std::string id;      // the file stem: "h200"
  std::string source;  // where it was read: a path, or "embedded:h200.toml"
  HardwareDecl hardware;
  TargetDefaults defaults;
};

// The id of the target chosen when no declaration matches the device (or there is no device).
inline constexpr const char* kFallbackTarget = "generic";

// Parses one declaration. Throws lathe::Error naming `source` and the offending key (unknown,
// missing, wrong type or out of range). attn_decode_splitk is kept as spelled (string or integer);
// resolution decides what an unparseable one means.
TargetDecl parse_target(std::string_view toml_text, const std::string& id, const std::string& source);

// Every declaration from the first source that exists (see the header comment), sorted by id.
// Throws lathe::Error for a bad file, an empty or missing $LATHE_TARGETS_DIR, or no "generic".
std::vector<TargetDecl> load_targets();

// The declarations embedded in this binary at build time: (file name, text) pairs.
const std::vector<std::pair<std::string, std::string>>& embedded_target_files();

// What the driver reports about the device the process will run on.
struct DeviceInfo {
  std::string name;  // e.g. "NVIDIA H200"
  int32_t sm_count = 0;
};

// Reads one environment variable (nullopt when unset); injectable for tests.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
EnvLookup process_env();

struct ResolvedTarget {
  TargetDecl decl;
  Levers levers;
  std::string chosen_by;           // "--target", "device 'NVIDIA H200'", "no device", "no match"
  std::vector<std::string> notes;  // warnings: SM-count disagreement, unparseable env levers
};

// Chooses the declaration (the requested id if given, else the device name's best match, else
// "generic") and resolves the levers: declaration overridden by the environment. Throws
// lathe::Error for a requested id that no declaration has, listing the known ones.
ResolvedTarget resolve_target(const std::vector<TargetDecl>& targets, const std::optional<std::string>& requested,
                              const std::optional<DeviceInfo>& device, const EnvLookup& env);

// "target defaults (<id>): <format_levers(levers)>".
std::string boot_line(const ResolvedTarget& resolved);

// load_targets + resolve_target against the process environment, logging the boot line and every
// note once per process. The one call a binary makes at boot.
ResolvedTarget resolve_boot_target(const std::optional<std::string>& requested, const std::optional<DeviceInfo>& device);

}  // namespace lathe::target
