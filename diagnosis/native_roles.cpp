#include "diagnosis/native_roles.h"

#include "base/ascii_case.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace hangpy::diagnosis {
namespace {

// Symbols are matched lowercased (ascii_lowercase), mangled or not:
// "_ZN4c10d16ProcessGroupGloo7runLoopEi" and "c10d::ProcessGroupGloo::runLoop(int)" both hold
// "processgroupgloo" and "runloop".

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

std::string_view module_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string_view(path) : std::string_view(path).substr(slash + 1);
}

}  // namespace

std::optional<NativeRole> native_role(const native::MergedStack& stack) {
  // Innermost first: what it waits in comes before what it is.
  std::string waits;
  bool in_work = false;
  for (const native::MergedFrame& frame : stack.frames) {
    if (!frame.native || frame.python) continue;
    const std::string symbol = ascii_lowercase(frame.native->symbol);
    const std::string_view module = module_name(frame.native->module);
    if (waits.empty() && has(symbol, "unboundbuffer")) {
      if (has(symbol, "waitrecv")) waits = "waits to receive from a peer";
      else if (has(symbol, "waitsend")) waits = "waits for a peer to receive what it sends";
    }
    if (has(symbol, "processgroupgloo") && (has(symbol, "asyncwork") || has(symbol, "execute"))) in_work = true;
    if (has(symbol, "processgroupgloo") && has(symbol, "runloop")) {
      if (in_work) return NativeRole{"a gloo worker of the process group, running a collective", waits, true, "gloo"};
      return NativeRole{"a gloo worker of the process group, idle (no collective queued)", "", false, "gloo"};
    }
    if (has(symbol, "gloo") && (has(symbol, "tcp4loop3run") || has(symbol, "tcp::loop::run")))
      return NativeRole{"gloo's network event loop", "", false, "gloo"};
    if (has(symbol, "processgroupnccl")) {
      if (has(symbol, "heartbeatmonitor")) return NativeRole{"NCCL's heartbeat monitor", "", false, "NCCL"};
      if (has(symbol, "watchdog") || has(symbol, "workcleanuploop"))
        return NativeRole{"NCCL's watchdog (checks the collectives' progress)", "", false, "NCCL"};
    }
    if (module.starts_with("libgomp")) return NativeRole{"an OpenMP (libgomp) pool worker", "", false, ""};
    if (module.starts_with("libiomp")) return NativeRole{"an OpenMP (Intel libiomp) pool worker", "", false, ""};
    if (module.starts_with("libomp")) return NativeRole{"an OpenMP (LLVM libomp) pool worker", "", false, ""};
    if (module.starts_with("libopenblas")) return NativeRole{"an OpenBLAS pool worker", "", false, ""};
    if (module.starts_with("libcuda")) return NativeRole{"a CUDA driver thread", "", false, ""};
  }
  return std::nullopt;
}

std::string describe_native_role(const NativeRole& role) {
  return role.waits.empty() ? role.role : role.role + ": " + role.waits;
}

}  // namespace hangpy::diagnosis
