#include "cpython/analyzer.h"

#include "cpython/layouts/all_layouts.h"
#include "cpython/stack_walker.h"
#include "cpython/version_probe.h"

namespace hangpy::cpython {
namespace {

std::string known_versions() {
  std::string names;
  for (const Layout* layout : all_layouts()) {
    if (!names.empty()) names += ", ";
    names += layout->name;
  }
  return names;
}

// The GIL holder: the runtime records the last thread that took it and whether it is held now.
void mark_gil_holder(const AddressSpace& memory, const Layout& layout, uint64_t runtime,
                     std::vector<PythonThread>& threads) {
  if (layout.runtime.gil_locked == kAbsent || layout.runtime.gil_last_holder == kAbsent) return;
  auto locked = read_value<int32_t>(memory, runtime + layout.runtime.gil_locked);
  auto holder = read_value<uint64_t>(memory, runtime + layout.runtime.gil_last_holder);
  if (!locked || !holder || *locked == 0) return;
  for (PythonThread& thread : threads) thread.holds_gil = thread.thread_state == *holder;
}

// Checks the chosen table against the target: every thread state must point back at an
// interpreter of the list. A wrong table fails this long before it reaches a frame.
void check_back_pointers(const AddressSpace& memory, const Layout& layout, uint64_t interpreter,
                         const std::vector<PythonThread>& threads,
                         std::vector<std::string>& warnings) {
  if (threads.empty() || layout.thread_state.interp == kAbsent) return;
  auto back = read_value<uint64_t>(memory, threads.front().thread_state +
                                               static_cast<uint64_t>(layout.thread_state.interp));
  if (!back || *back != interpreter) {
    warnings.push_back(fmt::format(
        "the Python {} layout does not fit this process (thread state 0x{:x} does not point back "
        "at its interpreter); try --python with another version",
        layout.name, threads.front().thread_state));
  }
}

}  // namespace

Expected<ProcessStacks> analyze(const Target& target, const AnalyzeOptions& options) {
  ProcessStacks result;
  if (options.forced_version) {
    result.version = *options.forced_version;
    result.version_source = "--python";
  } else if (auto found = probe_version(target)) {
    result.version = found->version;
    result.version_source = found->source;
  } else {
    return make_error(ErrorKind::kNotFound,
                      "no Python interpreter found: no Py_Version symbol and no python or "
                      "libpython file among the mapped files");
  }
  const PythonVersion& version = result.version;
  result.layout = find_layout(version.major, version.minor, version.free_threaded);
  if (!result.layout) {
    return make_error(ErrorKind::kUnsupported,
                      fmt::format("no layout table for Python {} (found by {}); known: {}",
                                  version.text(), result.version_source, known_versions()));
  }
  const Layout& layout = *result.layout;

  auto runtime = target.find_symbol("_PyRuntime");
  if (!runtime) {
    return make_error(ErrorKind::kNotFound,
                      "no Python interpreter found: the symbol _PyRuntime is in no mapped file "
                      "(are the binaries missing? try --exe, --sysroot or --lib-path)");
  }
  result.runtime_address = *runtime;
  auto first_interpreter =
      read_pointer(target.memory(), *runtime + static_cast<uint64_t>(layout.runtime.interpreters_head));
  if (!first_interpreter) {
    return make_error(ErrorKind::kNotFound,
                      fmt::format("cannot read the interpreter list: {}",
                                  first_interpreter.error().describe()));
  }
  if (*first_interpreter == 0) {
    return make_error(ErrorKind::kNotFound,
                      "no Python interpreter found: the runtime has no interpreter (not started "
                      "yet, or already finalized)");
  }

  StackWalker walker(target.memory(), layout);
  result.threads = walker.walk_interpreters(*first_interpreter, result.warnings);
  check_back_pointers(target.memory(), layout, *first_interpreter, result.threads,
                      result.warnings);
  mark_gil_holder(target.memory(), layout, *runtime, result.threads);
  return result;
}

}  // namespace hangpy::cpython
