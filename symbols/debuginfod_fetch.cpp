#include "symbols/debuginfod_fetch.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace hangpy::symbols {

namespace {

// The library's soname since elfutils 0.179; the header only declares what it exports.
constexpr const char* kLibrary = "libdebuginfod.so.1";

}  // namespace

struct DebuginfodFetch::Client {
  void* library = nullptr;
  decltype(&debuginfod_begin) begin = nullptr;
  decltype(&debuginfod_find_executable) find_executable = nullptr;
  decltype(&debuginfod_end) end = nullptr;
  debuginfod_client* handle = nullptr;
  ~Client() {
    if (handle) end(handle);
    // The library stays loaded: libcurl registers process-wide state that must not be unmapped.
  }
};

std::unique_ptr<DebuginfodFetch> DebuginfodFetch::from_environment(std::string& why_not) {
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  if (!urls || !*urls) return nullptr;
  auto client = std::make_unique<Client>();
  client->library = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!client->library) {
    why_not = std::string("DEBUGINFOD_URLS is set but ") + kLibrary +
              " cannot be loaded (install libdebuginfod1): files are not fetched";
    return nullptr;
  }
  client->begin = reinterpret_cast<decltype(client->begin)>(::dlsym(client->library, "debuginfod_begin"));
  client->find_executable = reinterpret_cast<decltype(client->find_executable)>(
      ::dlsym(client->library, "debuginfod_find_executable"));
  client->end = reinterpret_cast<decltype(client->end)>(::dlsym(client->library, "debuginfod_end"));
  if (!client->begin || !client->find_executable || !client->end) {
    why_not = std::string(kLibrary) + " lacks the client calls: files are not fetched";
    return nullptr;
  }
  client->handle = client->begin();
  if (!client->handle) {
    why_not = "the debuginfod client did not start: files are not fetched";
    return nullptr;
  }
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
  const int fd = client_->find_executable(client_->handle, id, 0, &path);
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
