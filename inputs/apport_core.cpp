#include "inputs/apport_core.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "inputs/apport_parser.h"
#include "inputs/progress_meter.h"
#include "inputs/sparse_spool.h"
#include "inputs/stream_decoder.h"

namespace hangpy::inputs {
namespace {

constexpr size_t kReadBytes = 1 << 20;
constexpr const char* kCoreField = "CoreDump";

std::optional<std::string> field(const ApportParser& parser, const char* name) {
  auto found = parser.fields().find(name);
  if (found == parser.fields().end() || found->second.empty()) return std::nullopt;
  return found->second;
}

}  // namespace

Expected<ApportCore> read_apport_core(const std::string& path, const std::string& name) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(ErrorKind::kIo, fmt::format("cannot open {}: {}", name, std::strerror(errno)));
  struct stat status{};
  const uint64_t total = fstat(fd, &status) == 0 ? static_cast<uint64_t>(status.st_size) : 0;
  auto spool = SparseSpool::create(fmt::format("the core decoded from {}", name));
  if (!spool) {
    close(fd);
    return std::unexpected(spool.error());
  }
  spool->require_elf();  // CoreDump is a core, and no more than its headers say
  std::unique_ptr<StreamDecoder> decoder = make_zlib_decoder();
  const ByteSink to_spool = [&spool](std::span<const std::byte> data) { return spool->append(data); };
  ApportParser parser(kCoreField, [&decoder, &to_spool](std::span<const std::byte> data) {
    return decoder->feed(data, to_spool);
  });
  ProgressMeter progress(fmt::format("decoding {} (apport)", name), total);

  auto fail = [&](Error error) -> Expected<ApportCore> {
    if (fd >= 0) close(fd);
    fd = -1;
    error.message = fmt::format("{}: {}", name, error.message);
    return std::unexpected(error);
  };
  std::vector<char> block(kReadBytes);
  uint64_t done = 0;
  for (;;) {
    ssize_t got = read(fd, block.data(), block.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return fail(Error{ErrorKind::kIo, std::strerror(errno), std::nullopt});
    if (got == 0) break;
    done += static_cast<uint64_t>(got);
    if (auto ok = parser.feed(std::string_view(block.data(), static_cast<size_t>(got))); !ok)
      return fail(ok.error());
    progress.update(done, spool->size());
  }
  close(fd);
  fd = -1;
  if (auto ok = parser.finish(); !ok) return fail(ok.error());
  if (!parser.binary_fields().contains(kCoreField)) {
    Error error{ErrorKind::kInvalidInput,
                "this apport report holds no CoreDump field (apport keeps the core only for "
                "crashes of packaged programs, and `apport-retrace` or a size limit may drop it)",
                std::nullopt};
    if (!field(parser, "ProblemType")) error.message = "not an apport report (no ProblemType or CoreDump field)";
    return fail(error);
  }
  auto complete = decoder->finish(to_spool);
  if (!complete) return fail(complete.error());

  ApportCore core;
  if (!*complete) {
    core.truncation = fmt::format("the CoreDump data in {} ends early (cut short?): analysing "
                                  "the first {} bytes it holds",
                                  name, spool->size());
  }
  if (spool->size() == 0) {
    return make_error(ErrorKind::kInvalidInput, fmt::format("{}: the CoreDump field is empty", name));
  }
  core.core_bytes = spool->size();
  auto spooled = spool->finish();
  if (!spooled) return std::unexpected(spooled.error());
  core.path = *spooled;
  core.executable = field(parser, "ExecutablePath");
  core.proc_maps = field(parser, "ProcMaps");
  core.environment = field(parser, "ProcEnviron");
  return core;
}

}  // namespace hangpy::inputs
