// What a thread that runs no Python is for, from its native frames: the threads a library starts
// behind the user's back (gloo's process-group workers and network loop, NCCL's watchdog, an
// OpenMP pool), so that a rank blocked in a collective says what the worker running that
// collective waits for ("a peer to receive what it sends"), and --native-all names each thread.
#pragma once

#include <optional>
#include <string>

#include "native/splice.h"

namespace hangpy::diagnosis {

struct NativeRole {
  std::string role;  // "a gloo worker of the process group, running a collective"
  // What it waits for, when it says: "waits for a peer to receive what it sends".
  std::string waits;
  bool runs_collective = false;  // it executes a collective the Python threads wait on
  std::string backend;           // "gloo", "NCCL"; "" for no torch.distributed thread
};

// nullopt when its frames name no role we know.
std::optional<NativeRole> native_role(const native::MergedStack& stack);

// "a gloo worker of the process group, running a collective: waits for a peer to receive what it
// sends"
std::string describe_native_role(const NativeRole& role);

}  // namespace hangpy::diagnosis
