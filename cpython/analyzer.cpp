#include "cpython/analyzer.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "cpython/container_reader.h"
#include "cpython/debug_offsets.h"
#include "cpython/finalizing.h"
#include "cpython/layout_check.h"
#include "cpython/layouts/all_layouts.h"
#include "cpython/runtime_locator.h"
#include "cpython/stack_walker.h"
#include "cpython/thread_names.h"
#include "cpython/version_probe.h"

namespace hangpy::cpython {
namespace {

struct GilReading {
  std::optional<uint64_t> address;  // the base of the layout's gil offsets
  std::optional<uint64_t> holder;   // the thread state holding it now
  bool disabled = false;            // free-threaded: no GIL in use
};

// Who holds the GIL, if a thread does: the GIL records the last thread that took it and whether
// it is held now (or, in 2.7 and 3.6, a variable is set while a thread holds it).
GilReading read_gil(const Target& target, const Layout& layout, uint64_t runtime,
                    uint64_t first_interpreter) {
  const GilLayout& gil = layout.gil;
  const AddressSpace& memory = target.memory();
  GilReading reading;
  if (!gil.holder_symbol.empty()) {
    auto symbol = target.find_symbol(gil.holder_symbol);
    if (!symbol) return reading;
    auto holder = read_pointer(memory, *symbol);
    if (holder && *holder != 0) reading.holder = *holder;
    return reading;
  }
  if (gil.locked == kAbsent || gil.last_holder == kAbsent) return reading;
  uint64_t base = runtime;
  if (gil.interpreter_gil != kAbsent) {
    auto pointer = read_pointer(memory, first_interpreter + static_cast<uint64_t>(gil.interpreter_gil));
    if (!pointer || *pointer == 0) return reading;
    base = *pointer;
  }
  reading.address = base;
  if (gil.enabled != kAbsent) {
    auto enabled = read_value<int32_t>(memory, base + static_cast<uint64_t>(gil.enabled));
    if (!enabled) return reading;
    if (*enabled == 0) {
      reading.disabled = true;
      return reading;
    }
  }
  auto locked = read_value<int32_t>(memory, base + static_cast<uint64_t>(gil.locked));
  auto holder = read_pointer(memory, base + static_cast<uint64_t>(gil.last_holder));
  if (locked && holder && *locked != 0) reading.holder = *holder;
  return reading;
}

// One line saying why the chosen layout cannot be used, and which layouts would fit.
std::unexpected<Error> layout_error(const Target& target, const Layout& layout,
                                    const std::string& chosen_by, const Error& why,
                                    const std::string& missing_binaries_remedy) {
  std::vector<std::string> fits = fitting_layouts(target);
  if (fits.empty() && why.kind == ErrorKind::kNotFound) {
    std::string hint;
    if (why.message.starts_with("the symbol") && !missing_binaries_remedy.empty())
      hint = fmt::format(" (are the binaries missing? {})", missing_binaries_remedy);
    return make_error(ErrorKind::kNotFound,
                      fmt::format("no Python interpreter found: {}{}", why.message, hint));
  }
  std::string others = "no known layout fits";
  if (!fits.empty()) {
    others = "layouts that fit: " + fits.front();
    for (size_t i = 1; i < fits.size(); ++i) others += ", " + fits[i];
  }
  return make_error(ErrorKind::kInvalidInput,
                    fmt::format("the Python {} layout (chosen by {}) does not fit this process: {}; "
                                "{}",
                                layout.name, chosen_by, why.describe(), others));
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

// Versions without native_thread_id (before 3.11): on x86-64 glibc a thread's pthread_t, which
// CPython keeps as thread_id, is its thread pointer, which each OS thread's fs_base holds. Where
// no register says (aarch64, whose thread pointer lies past the struct pthread; a thread read in
// its system call), the struct pthread itself does: glibc keeps the LWP in it at the offset its
// libthread_db descriptor `_thread_db_pthread_tid` ({bits, count, offset}) gives, and a value
// counts only when it is one of the target's LWPs.
void fill_lwps_from_thread_pointers(const Target& target, const std::vector<NativeThread>& natives,
                                    std::vector<PythonThread>& threads) {
  constexpr uint32_t kMaxTidOffset = 4096;  // struct pthread is about 2 KB in every glibc
  std::unordered_set<int64_t> lwps;
  std::unordered_map<int64_t, int64_t> by_namespace_id;  // see match_namespaced_threads
  for (const NativeThread& native : natives) {
    lwps.insert(native.lwp);
    if (native.namespace_lwp) by_namespace_id.emplace(*native.namespace_lwp, native.lwp);
  }
  std::optional<uint32_t> tid_offset;
  bool looked_up = false;
  auto tid_in_pthread = [&](uint64_t pthread) -> std::optional<int32_t> {
    if (!looked_up) {
      looked_up = true;
      if (auto descriptor = target.find_symbol("_thread_db_pthread_tid")) {
        auto fields = read_value<std::array<uint32_t, 3>>(target.memory(), *descriptor);
        if (fields && (*fields)[0] == 32 && (*fields)[1] == 1 && (*fields)[2] < kMaxTidOffset)
          tid_offset = (*fields)[2];
      }
    }
    if (!tid_offset) return std::nullopt;
    auto tid = read_value<int32_t>(target.memory(), pthread + *tid_offset);
    if (!tid || *tid <= 0) return std::nullopt;
    return *tid;
  };
  for (PythonThread& thread : threads) {
    if (thread.native_thread_id) continue;
    for (const NativeThread& native : natives) {
      if (native.fs_base != 0 && native.fs_base == thread.thread_id)
        thread.native_thread_id = static_cast<uint64_t>(native.lwp);
    }
    if (thread.native_thread_id) {
      // Matched by its thread pointer: the struct pthread says its id in its own namespace,
      // which differs from the target's in a container's process read from the host.
      auto tid = tid_in_pthread(thread.thread_id);
      if (tid && static_cast<uint64_t>(*tid) != *thread.native_thread_id) thread.namespace_thread_id = *tid;
      continue;
    }
    if (thread.thread_id == 0) continue;
    // The thread's own struct pthread, read for it alone (a live read refreshes it before the stop
    // when the thread sleeps: AddressSpace::attribute_reads).
    target.memory().attribute_reads(thread.thread_id);
    auto tid = tid_in_pthread(thread.thread_id);
    target.memory().attribute_reads(std::nullopt);
    if (!tid) continue;
    // glibc keeps the id of the thread's own namespace: a container's, read from the host.
    if (auto host = by_namespace_id.find(*tid); host != by_namespace_id.end() && host->second != *tid) {
      thread.native_thread_id = static_cast<uint64_t>(host->second);
      thread.namespace_thread_id = static_cast<uint64_t>(*tid);
    } else if (lwps.contains(*tid)) {
      thread.native_thread_id = static_cast<uint64_t>(*tid);
    }
  }
}

// A process in a PID namespace of its own (a container's, read from the host or from the host's
// gcore): its thread states hold the namespace's thread ids, the target's threads the host's. An
// id that is none of the target's threads is matched to one by the namespace id the target knows
// (a live process's NSpid) or by the thread pointer (x86-64: fs_base is the pthread_t CPython
// keeps as thread_id), and the namespace's id is kept beside it for the report. An id that
// matches nothing stays as it is.
void match_namespaced_threads(const std::vector<NativeThread>& natives, std::vector<PythonThread>& threads) {
  std::unordered_set<int64_t> lwps;
  std::unordered_map<int64_t, int64_t> by_namespace_id;
  for (const NativeThread& native : natives) {
    lwps.insert(native.lwp);
    if (native.namespace_lwp) by_namespace_id.emplace(*native.namespace_lwp, native.lwp);
  }
  for (PythonThread& thread : threads) {
    if (!thread.native_thread_id) continue;
    const auto id = static_cast<int64_t>(*thread.native_thread_id);
    std::optional<int64_t> host;
    if (auto found = by_namespace_id.find(id); found != by_namespace_id.end()) {
      host = found->second;
    } else if (!lwps.contains(id) && thread.thread_id != 0) {
      for (const NativeThread& native : natives)
        if (native.fs_base != 0 && native.fs_base == thread.thread_id) host = native.lwp;
    }
    if (!host || *host == id) continue;
    thread.namespace_thread_id = thread.native_thread_id;
    thread.native_thread_id = static_cast<uint64_t>(*host);
  }
}

std::optional<std::vector<int64_t>> threads_without_python(
    const std::vector<NativeThread>& natives, const std::vector<PythonThread>& threads) {
  if (natives.empty()) return std::nullopt;
  std::unordered_set<int64_t> running_python;
  for (const PythonThread& thread : threads) {
    if (!thread.native_thread_id) return std::nullopt;
    running_python.insert(static_cast<int64_t>(*thread.native_thread_id));
  }
  std::vector<int64_t> others;
  for (const NativeThread& native : natives)
    if (!running_python.contains(native.lwp)) others.push_back(native.lwp);
  return others;
}

// The newest compiled table of the same build kind: the base for a version newer than all tables.
const Layout* newest_layout(bool free_threaded) {
  const Layout* newest = nullptr;
  for (const Layout* layout : all_layouts()) {
    if (layout->free_threaded != free_threaded) continue;
    if (!newest || std::pair(layout->major, layout->minor) > std::pair(newest->major, newest->minor))
      newest = layout;
  }
  return newest;
}

// From 3.13 on the process states its own offsets. When they validate they win over the compiled
// table (a patch release may move a field); where they disagree we say so.
// `locating`: the compiled table, or the newest one for a version newer than every table.
// `located`: the runtime as found with `locating`.
void prefer_debug_offsets(const Target& target, const Layout* compiled, const Layout& locating,
                          const std::optional<RuntimeLocation>& located, ProcessStacks& result) {
  if (!locating.runtime.starts_with_debug_offsets) return;
  std::optional<uint64_t> runtime;
  if (located) runtime = located->address;
  if (!runtime) runtime = find_debug_offsets_cookie(target);
  if (!runtime) return;
  auto offsets = read_debug_offsets(target.memory(), *runtime);
  if (!offsets) {
    if (offsets.error().kind == ErrorKind::kCorrupt)
      result.notes.push_back("ignoring the process's _Py_DebugOffsets: " + offsets.error().describe());
    return;
  }
  result.version.free_threaded = offsets->free_threaded;
  if (result.version.micro < 0) result.version.micro = static_cast<int>((offsets->version_hex >> 8) & 0xff);
  if (!compiled || compiled->free_threaded != offsets->free_threaded)
    compiled = find_layout(result.version.major, result.version.minor, offsets->free_threaded);
  const Layout* base = compiled ? compiled : newest_layout(offsets->free_threaded);
  if (!base) return;
  std::vector<std::string> differences;
  auto derived = std::make_shared<Layout>(layout_from_debug_offsets(*offsets, *base, differences));
  if (!compiled) {
    derived->major = result.version.major;
    derived->minor = result.version.minor;
    result.notes.push_back(fmt::format(
        "no compiled table for Python {}: read through its _Py_DebugOffsets; what they do not "
        "describe (lock objects, asyncio's futures, frame globals, dict keys) is the {} table's, "
        "unchecked",
        result.version.text(), base->name));
  } else if (!differences.empty()) {
    std::string listed = differences.front();
    for (size_t i = 1; i < differences.size() && i < 4; ++i) listed += ", " + differences[i];
    result.notes.push_back(fmt::format(
        "the process's _Py_DebugOffsets differ from the compiled {} table in {} field(s) ({}); "
        "using the process's", base->name, differences.size(), listed));
  }
  result.layout = std::move(derived);
  result.layout_source = fmt::format("_Py_DebugOffsets ({} schema)", offsets->schema_tag);
}

// Python 2 builds store `unicode` in 2 or 4 bytes a unit, as configured; the exported names say
// which (unicodeobject.h renames the API to PyUnicodeUCS2_* or PyUnicodeUCS4_*).
void set_python2_unicode_width(const Target& target, ProcessStacks& result) {
  const Layout& layout = *result.layout;
  if (layout.string.python2_unicode_buffer == kAbsent ||
      layout.string.python2_unicode_width != kAbsent)
    return;
  int32_t width = kAbsent;
  if (target.find_symbol("PyUnicodeUCS4_FromString")) width = 4;
  else if (target.find_symbol("PyUnicodeUCS2_FromString")) width = 2;
  if (width == kAbsent) return;
  auto copy = std::make_shared<Layout>(layout);
  copy->string.python2_unicode_width = width;
  result.layout = std::move(copy);
}

// Each interpreter has its own threading module: names come from the thread's own interpreter
// (one OS thread can have a thread state in several).
// `thread_objects` receives every interpreter's Thread objects, the first interpreter's first
// (ProcessStacks::thread_objects).
void name_threads_of(const AddressSpace& memory, const Layout& layout,
                     std::vector<PythonThread>& threads,
                     std::optional<std::unordered_map<uint64_t, uint64_t>>& thread_objects) {
  thread_objects.emplace();
  std::vector<uint64_t> interpreters;
  for (const PythonThread& thread : threads) {
    if (std::find(interpreters.begin(), interpreters.end(), thread.interpreter) == interpreters.end())
      interpreters.push_back(thread.interpreter);
  }
  for (uint64_t interpreter : interpreters) {
    std::vector<PythonThread> own;
    for (const PythonThread& thread : threads)
      if (thread.interpreter == interpreter) own.push_back(thread);
    const auto objects = read_thread_objects(memory, layout, interpreter, own);
    for (const auto& entry : objects) thread_objects->insert(entry);
    auto names = names_of_thread_objects(memory, layout, objects);
    for (PythonThread& thread : threads) {
      if (thread.interpreter != interpreter) continue;
      if (auto name = names.find(thread.thread_id); name != names.end()) thread.name = name->second;
    }
    // A program that never imported threading has no thread objects, and its one thread no name
    // in memory; Python calls it MainThread all the same (threading names it so once imported).
    // Only a process's one thread state is surely its main thread: with more, the main thread
    // may have ended, and a thread _thread started goes unnamed.
    if (names.empty() && own.size() == 1 && interpreters.size() == 1)
      for (PythonThread& thread : threads) thread.name = "MainThread";
  }
}

}  // namespace

void name_threads(const Target& target, ProcessStacks& stacks) {
  if (stacks.layout) name_threads_of(target.memory(), *stacks.layout, stacks.threads, stacks.thread_objects);
}

Expected<ProcessStacks> analyze(const Target& target, const AnalyzeOptions& options) {
  ProcessStacks result;
  if (options.forced_version) {
    result.version = *options.forced_version;
    result.version_source = "--python";
    // The layout is forced; the micro version can still come from the process.
    auto found = probe_version(target);
    if (found && found->version.major == result.version.major &&
        found->version.minor == result.version.minor && result.version.micro < 0)
      result.version.micro = found->version.micro;
  } else if (auto found = probe_version(target)) {
    result.version = found->version;
    result.version_source = found->source;
  } else {
    return make_error(ErrorKind::kNotFound,
                      "no Python interpreter found: no Py_Version symbol and no python or "
                      "libpython file among the mapped files");
  }
  // A Py_TRACE_REFS build (--with-pydebug up to 3.7) puts two pointers before every object's
  // reference count: only such a build defines _Py_PrintReferenceAddresses. Looked for in the
  // versions where a debug build had it (the symbol search reads every module's table).
  if (result.version.major == 2 || (result.version.major == 3 && result.version.minor <= 7))
    result.version.trace_refs = target.find_symbol("_Py_PrintReferenceAddresses").has_value();
  const PythonVersion& version = result.version;
  const Layout* compiled = find_layout(version.major, version.minor, version.free_threaded, version.trace_refs);
  if (compiled) {
    // Compiled tables live for the whole program: share them without owning.
    result.layout = std::shared_ptr<const Layout>(std::shared_ptr<const Layout>(), compiled);
    result.layout_source = "compiled table";
  }
  // Finding the runtime can mean searching the data: once, with the table at hand (or the newest
  // of its kind, for a version newer than every table).
  const Layout* locating = compiled ? compiled : newest_layout(version.free_threaded);
  std::optional<RuntimeLocation> located;
  if (locating) located = locate_runtime(target, *locating);
  if (!options.forced_version && locating)
    prefer_debug_offsets(target, compiled, *locating, located, result);
  if (!result.layout) {
    return make_error(ErrorKind::kUnsupported,
                      fmt::format("no layout table for Python {} (found by {}){}; known: {}",
                                  version.text(), result.version_source,
                                  version.trace_refs ? ", a build with Py_TRACE_REFS (every object "
                                                       "has two more pointers first)" : "",
                                  layout_names()));
  }
  set_python2_unicode_width(target, result);
  const Layout& layout = *result.layout;

  const bool same_runtime = locating && locating->runtime.symbol == layout.runtime.symbol &&
                            locating->runtime.interpreters_head == layout.runtime.interpreters_head;
  auto fit = check_layout(target, layout, same_runtime ? located : std::nullopt);
  // Memory the core did not save says nothing against the layout (a truncated core): name the
  // missing memory, not the layout.
  if (!fit && fit.error().kind == ErrorKind::kNotSaved) {
    std::string where = "the interpreter's runtime";
    if (const auto runtime = same_runtime ? located : locate_runtime(target, layout))
      where += fmt::format(" at 0x{:x} (found by {})", runtime->address, runtime->found_by);
    return make_error(ErrorKind::kNotSaved,
                      fmt::format("{} lies in memory the core does not hold", where),
                      fit.error().address);
  }
  if (!fit) {
    return layout_error(target, layout, result.version_source, fit.error(),
                        options.missing_binaries_remedy);
  }
  result.runtime_address = fit->runtime;
  if (!fit->runtime_found_by.starts_with("symbol"))
    result.notes.push_back(fmt::format("found the interpreter list at 0x{:x} through {}",
                                       fit->runtime, fit->runtime_found_by));

  complete_version_from_sys(target.memory(), layout, fit->first_interpreter, result.version,
                            result.version_source);
  StackWalker walker(target.memory(), layout);
  result.threads = walker.walk_interpreters(fit->first_interpreter, result.warnings);
  // Asked once: a gdb target may have to select every thread to answer.
  const std::vector<NativeThread> natives = target.threads();
  match_namespaced_threads(natives, result.threads);
  fill_lwps_from_thread_pointers(target, natives, result.threads);
  result.threads_without_python = threads_without_python(natives, result.threads);
  if (options.name_threads) name_threads_of(target.memory(), layout, result.threads, result.thread_objects);
  if (auto finalizing = read_finalizing_thread_state(target, layout, fit->runtime)) {
    result.finalizing = *finalizing != 0;
    result.finalizing_thread_state = *finalizing;
  }
  const GilReading gil = read_gil(target, layout, fit->runtime, fit->first_interpreter);
  result.gil_address = gil.address;
  result.gil_disabled = gil.disabled;
  if (gil.holder) {
    for (PythonThread& thread : result.threads) thread.holds_gil = thread.thread_state == *gil.holder;
  }
  return result;
}

}  // namespace hangpy::cpython
