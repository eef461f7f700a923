// main() of the tokenizer unit suites. The Qwen3 tests read shared/tokenizers/qwen3 (outside the
// repository, 11 MB). Without it, the tests that do not need it still run (every test needing it
// has "Qwen3"/"qwen3" in its name) and the binary exits 77, so ctest reports the suite as
// skipped rather than passed; any failure still exits 1.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "test_support.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::filesystem::path qwen3 = lathe::tokenizer::test::qwen3_dir() + "/tokenizer.json";
  if (std::filesystem::exists(qwen3)) return RUN_ALL_TESTS();
  std::fprintf(stderr, "SKIPPING the Qwen3 tokenizer tests: %s not found\n", qwen3.c_str());
  ::testing::GTEST_FLAG(filter) = "-*Qwen3*:*qwen3*";
  int status = RUN_ALL_TESTS();
  return status != 0 ? status : 77;
}
