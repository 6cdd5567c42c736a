// A core of the committed corpus (tests/corpus/RELATIVE, zstd-compressed), inflated to a
// temporary file and opened as a CoreTarget; the file is removed at once, the target's mapping
// keeping it readable. For the unit tests that read real processes' memory.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "targets/core_target.h"

namespace hangpy::test_support {

struct CorpusCore {
  std::unique_ptr<targets::CoreTarget> target;  // null when it could not be opened
  std::string skip;   // why the test cannot run here (the core or zstd absent), or empty
  std::string error;  // why it could not be opened, or empty
};

inline CorpusCore open_corpus_core(const std::string& relative) {
  CorpusCore result;
  const std::filesystem::path source = std::filesystem::path(HANGPY_TEST_DATA_DIR) / ".." / "corpus" / relative;
  if (!std::filesystem::exists(source)) {
    result.skip = source.string() + " is not in the corpus";
    return result;
  }
  if (std::system("zstd --version >/dev/null 2>&1") != 0) {
    result.skip = "zstd is not installed";
    return result;
  }
  std::string name = relative;
  for (char& c : name) if (c == '/') c = '-';
  const std::filesystem::path core = std::filesystem::temp_directory_path() / ("hangpy-unit-" + name + "-" + std::to_string(::getpid()) + ".core");
  const std::string inflate = "zstd -q -d -f '" + source.string() + "' -o '" + core.string() + "'";
  if (std::system(inflate.c_str()) != 0) {
    result.error = "zstd failed on " + source.string();
    return result;
  }
  targets::CoreOptions options;
  options.core_path = core.string();
  auto target = targets::CoreTarget::open(options);
  std::filesystem::remove(core);
  if (!target) {
    result.error = target.error().describe();
    return result;
  }
  result.target = std::move(*target);
  return result;
}

}  // namespace hangpy::test_support
