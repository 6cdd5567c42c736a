// Every form a core reaches a user in, unwrapped into a plain ELF core file the core reader can
// map: a core as it is; one compressed by systemd-coredump (zstd, lz4, xz) or gzip; an ABRT
// problem directory; an apport .crash file. Told by content (input_format.h), never by name.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace hangpy::inputs {

struct CoreInput {
  std::string core_path;  // what the core reader opens (a /proc/self/fd path for unwrapped cores)
  std::string core_name;  // what messages call it: the given name, "DIR/coredump" for ABRT
  // The executable's path as the wrapper recorded it (ABRT `executable`, apport ExecutablePath):
  // used when neither --exe nor the core's own path finds the executable.
  std::optional<std::string> executable_hint;
  // /proc/PID/maps as the wrapper saved it (ABRT `maps`, apport ProcMaps): the mapped files, used
  // when the core has no NT_FILE note.
  std::optional<std::string> maps_hint;
  // The process's environment as the wrapper saved it (ABRT `environ`, one variable a line;
  // apport ProcEnviron, the few variables apport keeps), and which that was; used for labels
  // where the core's own memory does not hold its environment.
  std::optional<std::string> saved_environment;
  std::string saved_environment_source;
  std::optional<std::string> saved_host;  // ABRT `hostname`
  // What each file descriptor was, as the wrapper saved it (ABRT `open_fds`): names the file,
  // pipe or socket a thread blocks reading or writing, which a core does not hold.
  std::map<int64_t, std::string> saved_open_files;
  std::vector<std::string> warnings;  // one line each: compressed data cut short
  std::vector<std::string> notes;     // one line each: what was unwrapped
};

// `path` is the file or directory to read, `name` what messages call it (the path the user gave,
// "standard input"). Errors: kIo, kInvalidInput (corrupt or truncated wrapper, an ABRT directory
// without a coredump, an apport report without CoreDump), each one line naming `name`.
Expected<CoreInput> unwrap_core_input(const std::string& path, const std::string& name);

}  // namespace hangpy::inputs
