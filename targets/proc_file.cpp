#include "targets/proc_file.h"

#include <fstream>
#include <sstream>

namespace hangpy::targets {

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

std::optional<std::vector<std::string>> read_proc_stat(const std::string& path) {
  auto text = read_proc_file(path);
  if (!text) return std::nullopt;
  const size_t close = text->rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text->substr(close + 1));
  std::vector<std::string> fields;
  for (std::string field; rest >> field;) fields.push_back(std::move(field));
  if (fields.empty() || fields.front().empty()) return std::nullopt;
  return fields;
}

}  // namespace hangpy::targets
