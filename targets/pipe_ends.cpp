#include "targets/pipe_ends.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "base/parse_number.h"
#include "targets/file_descriptors.h"
#include "targets/note_records.h"
#include "targets/proc_file.h"

namespace hangpy::targets {
namespace {

constexpr size_t kRecordWords = 3;

std::optional<uint64_t> pipe_inode(int pid, std::string_view fd) {
  std::array<char, 64> buffer{};
  const std::string path = fmt::format("/proc/{}/fd/{}", pid, fd);
  const ssize_t length = readlink(path.c_str(), buffer.data(), buffer.size() - 1);
  if (length <= 0) return std::nullopt;
  const std::string_view link(buffer.data(), static_cast<size_t>(length));
  constexpr std::string_view kPipe = "pipe:[";
  if (!link.starts_with(kPipe) || !link.ends_with(']')) return std::nullopt;
  return parse_decimal<uint64_t>(link.substr(kPipe.size(), link.size() - kPipe.size() - 1));
}


}  // namespace

std::vector<cpython::PipeEnd> live_pipe_ends(int pid) {
  std::vector<cpython::PipeEnd> ends;
  DIR* fds = opendir(fmt::format("/proc/{}/fd", pid).c_str());
  if (fds == nullptr) return ends;
  size_t looked = 0;
  while (dirent* entry = readdir(fds)) {
    if (entry->d_name[0] == '.') continue;
    if (++looked > kMaxDescriptorsLooked || ends.size() >= kMaxPipeEnds) break;
    const std::optional<int64_t> fd = parse_decimal<int64_t>(entry->d_name);
    if (!fd) continue;
    const std::optional<uint64_t> inode = pipe_inode(pid, entry->d_name);
    if (!inode) continue;
    const std::optional<int> mode = access_mode(pid, static_cast<int>(*fd));
    if (mode != O_RDONLY && mode != O_WRONLY) continue;
    ends.push_back({*fd, *inode, mode == O_RDONLY});
  }
  closedir(fds);
  std::sort(ends.begin(), ends.end(), [](const auto& a, const auto& b) { return a.fd < b.fd; });
  return ends;
}

std::vector<std::byte> encode_pipe_ends(const std::vector<cpython::PipeEnd>& ends) {
  std::vector<std::byte> out;
  for (const cpython::PipeEnd& end : ends)
    append_note_record<kRecordWords>(out, {static_cast<uint64_t>(end.fd), end.inode, end.read_end ? 1u : 0u});
  return out;
}

std::vector<cpython::PipeEnd> decode_pipe_ends(std::span<const std::byte> desc) {
  std::vector<cpython::PipeEnd> ends;
  for (const auto& words : note_records<kRecordWords>(desc, kMaxPipeEnds)) {
    if (words[2] > 1 || words[0] > static_cast<uint64_t>(INT32_MAX)) continue;
    ends.push_back({static_cast<int64_t>(words[0]), words[1], words[2] == 1});
  }
  return ends;
}

}  // namespace hangpy::targets
