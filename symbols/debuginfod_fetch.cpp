#include "symbols/debuginfod_fetch.h"

#include <elfutils/debuginfod.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace hangpy::symbols {

struct DebuginfodFetch::Client {
  debuginfod_client* handle = nullptr;
  ~Client() {
    if (handle) debuginfod_end(handle);
  }
};

std::unique_ptr<DebuginfodFetch> DebuginfodFetch::from_environment() {
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  if (!urls || !*urls) return nullptr;
  auto client = std::make_unique<Client>();
  client->handle = debuginfod_begin();
  if (!client->handle) return nullptr;
  return std::unique_ptr<DebuginfodFetch>(new DebuginfodFetch(std::move(client)));
}

DebuginfodFetch::DebuginfodFetch(std::unique_ptr<Client> client) : client_(std::move(client)) {}
DebuginfodFetch::~DebuginfodFetch() = default;

std::optional<std::string> DebuginfodFetch::fetch_executable(const std::string& build_id_hex,
                                                             std::string& error) {
  if (!gave_up_.empty()) {
    error = gave_up_;
    return std::nullopt;
  }
  if (fetches_ >= kMaxFetches) {
    error = "more than " + std::to_string(kMaxFetches) + " debuginfod fetches in one run";
    return std::nullopt;
  }
  ++fetches_;
  // The client takes the build-id as hex text when its length is 0.
  const auto* id = reinterpret_cast<const unsigned char*>(build_id_hex.c_str());
  char* path = nullptr;
  const int fd = debuginfod_find_executable(client_->handle, id, 0, &path);
  if (fd < 0) {
    error = std::string("debuginfod: ") + std::strerror(-fd);
    // "Not there" is an answer; a timeout or an unreachable server would cost as much again for
    // every later module, so the run stops asking.
    if (-fd != ENOENT) gave_up_ = error + " (no further fetches)";
    return std::nullopt;
  }
  ::close(fd);
  std::string result = path ? path : "";
  std::free(path);
  if (result.empty()) {
    error = "debuginfod: no path for the fetched file";
    return std::nullopt;
  }
  return result;
}

}  // namespace hangpy::symbols
