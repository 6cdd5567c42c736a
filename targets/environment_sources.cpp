// Where a target finds its process's label variables and host (cpython/process_environment.h):
// for a core, its snapshot's note, its initial stack, else libc's environ, else what its wrapper
// saved (ABRT `environ` and `hostname`, apport ProcEnviron); for a live process,
// /proc/PID/environ and this machine's name.
#include "targets/core_target.h"
#include "targets/live_target.h"

#include <limits.h>
#include <unistd.h>

#include <fmt/format.h>

#include "targets/core_file.h"
#include "targets/initial_environment.h"
#include "targets/proc_file.h"

namespace hangpy::targets {
namespace {

cpython::Environment kept(const std::vector<std::string>& entries) {
  cpython::Environment variables;
  for (const std::string& entry : entries) cpython::keep_label_variables(entry, variables);
  return variables;
}

}  // namespace

cpython::ProcessEnvironment CoreTarget::environment() const {
  const CoreTarget& target = *this;
  const CoreOptions& saved = options();
  cpython::ProcessEnvironment environment;
  environment.system_host = saved.saved_host;
  // A snapshot says its labels itself: its stack holds at most a few pages of the environment.
  if (const auto& labels = target.core().snapshot_labels()) {
    environment.variables = cpython::label_variables_of_text(*labels);
    environment.source = "snapshot note";
    return environment;
  }
  const KeepVariable keep = [](std::string_view name) { return cpython::is_label_variable(name); };
  // A snapshot without its note (an older hangpy's) finds its environment strings zeroed here.
  auto initial = read_initial_environment(target.memory(), target.core().auxv(), keep);
  if (initial) {
    environment.variables = kept(*initial);
    environment.source = "initial stack";
    return environment;
  }
  // Overwritten (setproctitle) or not saved: the environment as libc holds it now.
  for (const char* symbol : {"environ", "__environ"}) {
    auto address = target.find_symbol(symbol);
    if (!address) continue;
    if (auto current = read_environment_array(target.memory(), *address, keep)) {
      environment.variables = kept(*current);
      environment.source = "libc environ";
      return environment;
    }
  }
  if (saved.saved_environment) {
    environment.variables = cpython::label_variables_of_text(*saved.saved_environment);
    environment.source = saved.saved_environment_source;
  }
  return environment;
}

cpython::ProcessEnvironment LiveTarget::environment() const {
  const int64_t pid = process().pid;
  cpython::ProcessEnvironment environment;
  const std::string path = fmt::format("/proc/{}/environ", pid);
  if (const std::optional<std::string> text = read_proc_file(path)) {
    environment.variables = cpython::label_variables_of_text(*text);
    environment.source = path;
  }
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') environment.system_host = host;
  return environment;
}

}  // namespace hangpy::targets
