// A process as the analysis reads it, whatever it comes from: a cpython::Target (memory, symbols,
// threads, modules) that also says what it knows beside its memory (TargetFacts): its PID, its OS
// threads and their registers, its container's PIDs, the function a pc is in, what a file
// descriptor is. targets::CoreTarget, targets::LiveTarget and gdbplugin::GdbTarget implement it,
// each once, so that no caller assembles a target's facts by hand.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cpython/target.h"
#include "diagnosis/diagnosis.h"

namespace hangpy::analysis {

// What the target knows besides its memory, which the diagnosis uses.
struct TargetFacts {
  int64_t pid = 0;
  std::vector<cpython::NativeThread> os_threads;
  std::function<std::optional<std::string>(uint64_t pc)> function_at;
  // What a file descriptor is (a live process's /proc; a core's saved notes); empty when the
  // target cannot say.
  std::function<std::optional<diagnosis::FileDescriptorFacts>(int64_t fd)> describe_fd;
  std::vector<cpython::NamespacePid> namespace_pids;  // ProcessInfo's: a container's process
};

class ProcessTarget : public cpython::Target {
 public:
  // The facts as the target knows them now (a live process's threads are read again). The
  // functions it holds refer to the target, which must outlive them.
  virtual TargetFacts facts() const = 0;
};

}  // namespace hangpy::analysis
