#include "cpython/analyzer.h"

#include "cpython/container_reader.h"
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

// The thread state holding the GIL, if one does: the GIL records the last thread that took it
// and whether it is held now (or, in 2.7 and 3.6, a variable is set while a thread holds it).
std::optional<uint64_t> gil_holder(const Target& target, const Layout& layout, uint64_t runtime,
                                   uint64_t first_interpreter) {
  const GilLayout& gil = layout.gil;
  const AddressSpace& memory = target.memory();
  if (!gil.holder_symbol.empty()) {
    auto symbol = target.find_symbol(gil.holder_symbol);
    if (!symbol) return std::nullopt;
    auto holder = read_pointer(memory, *symbol);
    if (!holder || *holder == 0) return std::nullopt;
    return *holder;
  }
  if (gil.locked == kAbsent || gil.last_holder == kAbsent) return std::nullopt;
  uint64_t base = runtime;
  if (gil.interpreter_gil != kAbsent) {
    auto pointer = read_pointer(memory, first_interpreter + static_cast<uint64_t>(gil.interpreter_gil));
    if (!pointer || *pointer == 0) return std::nullopt;
    base = *pointer;
  }
  if (gil.enabled != kAbsent) {
    auto enabled = read_value<int32_t>(memory, base + static_cast<uint64_t>(gil.enabled));
    if (!enabled || *enabled == 0) return std::nullopt;  // free-threaded: no GIL in use
  }
  auto locked = read_value<int32_t>(memory, base + static_cast<uint64_t>(gil.locked));
  auto holder = read_pointer(memory, base + static_cast<uint64_t>(gil.last_holder));
  if (!locked || !holder || *locked == 0) return std::nullopt;
  return *holder;
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

// Versions before 3.11 have no Py_Version: their micro version is in sys.version, which the
// interpreter's sys dict holds ("3.8.18 (default, ...)").
void complete_version_from_sys(const AddressSpace& memory, const Layout& layout,
                               uint64_t interpreter, PythonVersion& version, std::string& source) {
  if (version.micro >= 0 || layout.interpreter.sysdict == kAbsent) return;
  auto sysdict = read_pointer(memory, interpreter + static_cast<uint64_t>(layout.interpreter.sysdict));
  if (!sysdict || *sysdict == 0) return;
  ObjectReader objects(memory, layout);
  auto text_object = ContainerReader(objects).dict_get(*sysdict, "version");
  if (!text_object || *text_object == 0) return;
  auto text = objects.read_string(*text_object);
  if (!text) return;
  auto parsed = parse_version(text->substr(0, text->find_first_of(" +abrc")));
  if (parsed && parsed->major == version.major && parsed->minor == version.minor) {
    version.micro = parsed->micro;
    source += ", sys.version";
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

  auto runtime = target.find_symbol(layout.runtime.symbol);
  if (!runtime) {
    return make_error(ErrorKind::kNotFound,
                      fmt::format("no Python interpreter found: the symbol {} is in no mapped file "
                                  "(are the binaries missing? try --exe, --sysroot or --lib-path)",
                                  layout.runtime.symbol));
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

  complete_version_from_sys(target.memory(), layout, *first_interpreter, result.version,
                            result.version_source);
  StackWalker walker(target.memory(), layout);
  result.threads = walker.walk_interpreters(*first_interpreter, result.warnings);
  check_back_pointers(target.memory(), layout, *first_interpreter, result.threads,
                      result.warnings);
  if (auto holder = gil_holder(target, layout, *runtime, *first_interpreter)) {
    for (PythonThread& thread : result.threads) thread.holds_gil = thread.thread_state == *holder;
  }
  return result;
}

}  // namespace hangpy::cpython
