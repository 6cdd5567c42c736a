#include "cpython/layout_check.h"

#include "cpython/layouts/all_layouts.h"
#include "cpython/stack_walker.h"

namespace hangpy::cpython {
namespace {

constexpr size_t kThreadsChecked = 8;  // enough to tell; cheap on a process with thousands

}  // namespace

Expected<LayoutFit> check_layout(const Target& target, const Layout& layout,
                                 const std::optional<RuntimeLocation>& located) {
  const AddressSpace& memory = target.memory();
  auto location = located ? located : locate_runtime(target, layout);
  if (!location) {
    return make_error(ErrorKind::kNotFound,
                      fmt::format("the symbol {} is in no mapped file, and a search of the data "
                                  "found no runtime",
                                  layout.runtime.symbol));
  }
  std::optional<uint64_t> runtime = location->address;
  auto interpreter =
      read_pointer(memory, *runtime + static_cast<uint64_t>(layout.runtime.interpreters_head));
  if (!interpreter) return std::unexpected(interpreter.error());
  if (*interpreter == 0) {
    return make_error(ErrorKind::kNotFound,
                      "the runtime has no interpreter (not started yet, or already finalized)");
  }
  StackWalker walker(memory, layout);
  auto states = walker.thread_states(*interpreter);
  // Memory the core did not save says nothing against the layout: the walk reports it later.
  if (!states && states.error().kind == ErrorKind::kNotSaved)
    return LayoutFit{*runtime, *interpreter, location->found_by};
  if (!states) return make_error(ErrorKind::kCorrupt, "its thread list cannot be read");
  // A running interpreter has at least its main thread; an empty list means a wrong offset. A
  // list that loops or goes on too long after its first states is the process's damage, which
  // the walk reports, not the layout's (the states read are checked below all the same).
  // A runtime caught while it starts (or after it finalized) has no thread either: like a runtime
  // with no interpreter, that is said as such, not as a wrong layout.
  if (states->states.empty())
    return make_error(ErrorKind::kNotFound,
                      "its interpreter has no thread (not started yet, or already finalized)");
  // One thread whose frames read as code objects is enough; a thread with a corrupt chain must
  // not hide the others, so the layout fails only when every thread checked fails.
  std::optional<Error> first_failure;
  size_t checked = 0;
  for (uint64_t state : states->states) {
    if (checked++ == kThreadsChecked) break;
    auto back = read_pointer(memory, state + static_cast<uint64_t>(layout.thread_state.interp));
    if (!back && back.error().kind == ErrorKind::kNotSaved) continue;  // the walk reports it
    if (!back || *back != *interpreter) {
      return make_error(ErrorKind::kCorrupt,
                        "a thread state does not point back at its interpreter", state);
    }
    PythonThread thread = walker.walk_thread(state, 0);
    if (!thread.frames.empty()) {
      first_failure.reset();
      break;  // a frame with a code object: the frame layout fits too
    }
    if (thread.error && thread.error->kind != ErrorKind::kNotSaved && !first_failure)
      first_failure = thread.error;
  }
  if (first_failure) {
    return make_error(ErrorKind::kCorrupt,
                      fmt::format("its frames do not read: {}", first_failure->message),
                      first_failure->address);
  }
  return LayoutFit{*runtime, *interpreter, location->found_by};
}

std::vector<std::string> fitting_layouts(const Target& target) {
  std::vector<std::string> names;
  for (const Layout* layout : all_layouts()) {
    if (check_layout(target, *layout)) names.emplace_back(layout->name);
  }
  return names;
}

}  // namespace hangpy::cpython
