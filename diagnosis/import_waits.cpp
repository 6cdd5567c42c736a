#include "diagnosis/import_waits.h"

#include <string_view>

#include <fmt/format.h>

#include "base/printable.h"
#include "cpython/instance_attributes.h"

namespace hangpy::diagnosis::detail {
namespace {

// The frames in from the innermost that a module lock's acquire can be under (3.12's acquire
// waits in a `with` of its own lock: still the acquire frame).
constexpr size_t kFramesLooked = 4;

bool importlib_frame(const cpython::PythonFrame& frame) {
  std::string_view file = frame.file;
  return file == "<frozen importlib._bootstrap>" || file.ends_with("/importlib/_bootstrap.py");
}

// The module's name: a str attribute, bounded.
std::optional<std::string> module_name(const Context& context, uint64_t lock) {
  cpython::InstanceAttributes attributes(context.objects);
  auto name = attributes.get(lock, "name");
  if (!name || *name == 0 || type_name(context, *name) != "str") return std::nullopt;
  auto text = context.objects.read_string(*name);
  if (!text || text->empty()) return std::nullopt;
  return *text;
}

}  // namespace

void name_import_wait(const Context& context, size_t index, ThreadDiagnosis& thread) {
  // A thread that runs, or whose wait is already named by something surer (the GIL, a
  // collective), is not blocked on the module's lock.
  const WaitKind kind = thread.blocked_on.kind;
  if (kind != WaitKind::kLock && kind != WaitKind::kSyscall && kind != WaitKind::kUnknown) return;
  const auto& frames = context.stacks.threads[index].frames;
  for (size_t i = 0; i < frames.size() && i < kFramesLooked; ++i) {
    if (!importlib_frame(frames[i])) return;
    if (frames[i].function != "acquire") continue;
    const uint64_t lock = frame_self(context, frames[i]);
    if (lock == 0 || type_name(context, lock) != "_ModuleLock") return;
    const std::optional<std::string> name = module_name(context, lock);
    if (!name) return;
    BlockedOn blocked;
    blocked.kind = WaitKind::kLock;
    blocked.object = lock;
    // The module's lock in importlib is what it waits for; the import is what the program wrote.
    blocked.what = fmt::format("the import of {}", printable(*name));
    if (auto owner = int_attribute(context, lock, "owner")) {
      blocked.owner = thread_by_ident(context, *owner);
      if (blocked.owner) {
        blocked.owner_lwp = lwp_of(context, *blocked.owner);
      } else {
        // The lock records its holder: a thread of the parent, which the fork did not copy.
        blocked.holder_gone = true;
        blocked.gone_owner_ident = *owner;
        blocked.detail = fmt::format("thread 0x{:x} was importing it, and is no thread of this process", *owner);
      }
    } else {
      blocked.owner_unknown = true;
    }
    thread.blocked_on = std::move(blocked);
    return;
  }
}

}  // namespace hangpy::diagnosis::detail
