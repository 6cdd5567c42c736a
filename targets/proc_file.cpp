#include "targets/proc_file.h"

#include <fstream>

namespace hangpy::coreanalyze {

std::optional<std::string> read_proc_file(const std::string& path) {
  constexpr size_t kMaxProcFileBytes = 64 * 1024 * 1024;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxProcFileBytes) break;
  }
  return text;
}

}  // namespace hangpy::coreanalyze
