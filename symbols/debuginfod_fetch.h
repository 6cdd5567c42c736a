// Fetches a binary by build-id from the debuginfod servers named in DEBUGINFOD_URLS, through
// elfutils' client library (which honours DEBUGINFOD_TIMEOUT and caches in
// DEBUGINFOD_CACHE_PATH). The library is opened at run time (dlopen), as libdw does for its own
// lookups: it drags in libcurl and a TLS stack that have no static builds, so the portable
// coreanalyze could not link it, and a machine without it still reads every local core. The last place a core's files are looked for: used only for a module
// a read or a symbol lookup needs, at most kMaxFetches times in one run, and not again after a
// timeout or an unreachable server.
#pragma once

#include <memory>
#include <optional>
#include <string>

namespace hangpy::symbols {

class DebuginfodFetch {
 public:
  static constexpr int kMaxFetches = 32;

  // nullptr when DEBUGINFOD_URLS is unset or empty, or the client cannot start; in the latter
  // case `why_not` says why in one line (e.g. libdebuginfod.so.1 is not installed).
  static std::unique_ptr<DebuginfodFetch> from_environment(std::string& why_not);
  ~DebuginfodFetch();
  DebuginfodFetch(const DebuginfodFetch&) = delete;
  DebuginfodFetch& operator=(const DebuginfodFetch&) = delete;

  // The path of the cached executable or library with this build-id (hex), or nullopt with
  // `error` set to one line saying why.
  std::optional<std::string> fetch_executable(const std::string& build_id_hex, std::string& error);

 private:
  struct Client;
  explicit DebuginfodFetch(std::unique_ptr<Client> client);
  std::unique_ptr<Client> client_;
  int fetches_ = 0;
  std::string gave_up_;  // why fetching stopped for this run ("" while it goes on)
};

}  // namespace hangpy::symbols
