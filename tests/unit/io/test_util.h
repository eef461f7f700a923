#pragma once
// Helpers shared by the checkpoint-layer unit tests (io, model_config): a scratch directory,
// raw file writing, and capturing a lathe::Error's message.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unistd.h>

#include "core/error.h"

namespace lathe::test {

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "lathe_ckpt_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    if (info != nullptr) name += std::string("_") + info->name();
    path_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code error;
    std::filesystem::remove_all(path_, error);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// The message of the lathe::Error `action` throws; records a failure when it throws none.
template <typename Action>
std::string error_of(Action&& action) {
  try {
    action();
  } catch (const lathe::Error& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a lathe::Error";
  return "";
}

// Asserts that `message` contains every one of `parts`.
inline void expect_contains(const std::string& message, std::initializer_list<std::string_view> parts) {
  for (std::string_view part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "message lacks \"" << part << "\": " << message;
  }
}

}  // namespace lathe::test
