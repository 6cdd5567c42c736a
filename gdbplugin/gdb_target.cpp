#include "gdbplugin/gdb_target.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "gdbplugin/gdb_api.h"
#include "gdbplugin/gdb_info.h"
#include "gdbplugin/python_error.h"

namespace hangpy::gdbplugin {
namespace {

PyRef live_or_core_inferior() {
  PyRef inferior = selected_inferior();
  PyRef pid = checked(PyObject_GetAttrString(inferior.get(), "pid"));
  if (PyLong_AsLongLong(pid.get()) <= 0) {
    PyErr_Clear();
    throw UserError("hangpy: no process: attach to one, run one, or open a core first");
  }
  return inferior;
}

// The thread pointer of a thread, from gdb's thread handle: with glibc's libthread_db the handle
// is the pthread_t, which on x86-64 is the thread's fs_base. 0 when gdb has no handle (no
// libthread_db); the engine then has no use for it (see analyzer.cpp).
uint64_t thread_pointer(PyObject* thread) {
  PyObject* handle = PyObject_CallMethod(thread, "handle", nullptr);
  if (!handle) {
    if (python_interrupt_pending()) throw PythonErrorSet();
    PyErr_Clear();
    return 0;
  }
  PyRef handle_ref = PyRef::steal(handle);
  uint64_t value = 0;
  if (PyBytes_Check(handle) && PyBytes_Size(handle) == sizeof(value))
    std::memcpy(&value, PyBytes_AsString(handle), sizeof(value));
  return value;
}

// The engine calls the Target without expecting exceptions: what a call into gdb throws ends
// here. A Ctrl-C makes every later read fail (the command re-raises it); anything else gives an
// empty answer, which the engine reports as a missing symbol or thread.
template <typename Result, typename Body>
Result without_exceptions(const GdbMemory& memory, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    if (python_interrupt_pending()) memory.mark_interrupted();
    PyErr_Clear();
    return Result{};
  }
}

}  // namespace

GdbTarget::GdbTarget() : inferior_(live_or_core_inferior()), memory_(inferior_) {
  read_snapshot_note();
}

void GdbTarget::read_snapshot_note() {
  std::optional<std::string> core = core_file_path();
  if (!core) return;
  auto recorded = symbols::read_snapshot_symbols(*core);
  if (!recorded) {
    warnings_.push_back(fmt::format("cannot read the notes of {}: {}", *core,
                                    recorded.error().describe()));
    return;
  }
  if (!*recorded) return;  // an ordinary core: gdb's symbols
  snapshot_path_ = *core;
  recorded_symbols_ = std::move(**recorded);
}

std::optional<uint64_t> GdbTarget::find_symbol(std::string_view name) const {
  auto recorded = recorded_symbols_.find(std::string(name));
  if (recorded != recorded_symbols_.end()) return recorded->second;
  if (auto found = symbols_.find(name); found != symbols_.end()) return found->second;
  if (memory_.interrupted()) return std::nullopt;
  auto address = without_exceptions<std::optional<uint64_t>>(memory_, [&] {
    return symbol_address(name);
  });
  if (!memory_.interrupted()) symbols_.emplace(std::string(name), address);
  return address;
}

analysis::TargetFacts GdbTarget::facts() const {
  analysis::TargetFacts facts;
  PyRef pid = checked(PyObject_GetAttrString(inferior_.get(), "pid"));
  facts.pid = PyLong_AsLongLong(pid.get());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    facts.pid = 0;
  }
  for (const ThreadWaitState& state : thread_wait_states(0, {})) {
    cpython::NativeThread thread;
    thread.lwp = state.lwp;
    thread.syscall = state.syscall;
    thread.syscall_arguments = state.syscall_arguments;
    thread.machine = state.machine;
    thread.syscall_arguments_lost = state.syscall_arguments_lost;
    facts.os_threads.push_back(thread);
  }
  return facts;
}

std::vector<cpython::NativeThread> GdbTarget::threads() const {
  return without_exceptions<std::vector<cpython::NativeThread>>(memory_, [&] {
    return list_threads();
  });
}

std::vector<cpython::MappedModule> GdbTarget::modules() const {
  return without_exceptions<std::vector<cpython::MappedModule>>(memory_, [&] {
    return list_modules();
  });
}

std::vector<cpython::NativeThread> GdbTarget::list_threads() const {
  PyRef list = checked(PyObject_CallMethod(inferior_.get(), "threads", nullptr));
  PyRef sequence = checked(PySequence_Tuple(list.get()));
  std::vector<cpython::NativeThread> threads;
  // Threads gdb has no handle for (no libthread_db: a core without its binaries, a snapshot).
  std::vector<PyRef> without_handle;
  std::vector<size_t> without_handle_index;
  Py_ssize_t count = PyTuple_Size(sequence.get());
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* thread = PyTuple_GetItem(sequence.get(), i);
    PyRef ptid = checked(PyObject_GetAttrString(thread, "ptid"));
    cpython::NativeThread native;
    if (PyTuple_Check(ptid.get()) && PyTuple_Size(ptid.get()) >= 2)
      native.lwp = PyLong_AsLongLong(PyTuple_GetItem(ptid.get(), 1));
    if (PyErr_Occurred()) throw PythonErrorSet();
    native.fs_base = thread_pointer(thread);
    if (native.fs_base == 0) {
      without_handle.push_back(PyRef::borrow(thread));
      without_handle_index.push_back(threads.size());
    }
    threads.push_back(native);
  }
  // The thread pointer is also the fs_base register, which gdb reads from the core's notes.
  std::vector<uint64_t> registers = fs_base_registers(without_handle);
  for (size_t i = 0; i < registers.size(); ++i)
    threads[without_handle_index[i]].fs_base = registers[i];
  return threads;
}

std::vector<cpython::MappedModule> GdbTarget::list_modules() const {
  // Only the paths are of use to the engine (the version probe reads file names): the files gdb
  // loaded, then the files the process maps, which gdb knows even when it has none of them.
  PyRef objfiles = gdb_call("objfiles");
  PyRef sequence = checked(PySequence_Tuple(objfiles.get()));
  std::vector<cpython::MappedModule> modules;
  Py_ssize_t count = PyTuple_Size(sequence.get());
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyRef name = checked(PyObject_GetAttrString(PyTuple_GetItem(sequence.get(), i),
                                                "filename"));
    if (!PyUnicode_Check(name.get())) continue;
    auto path = utf8_of(name.get());
    if (!path) throw PythonErrorSet();
    modules.push_back(cpython::MappedModule{*path, 0, 0, 0});
  }
  std::map<std::string, size_t> mapped_index;  // a file mapped in several pieces is one module
  for (const MappedFile& file : mapped_files()) {
    auto [entry, added] = mapped_index.try_emplace(file.path, modules.size());
    if (added) {
      modules.push_back(cpython::MappedModule{file.path, file.start, file.end, 0});
      continue;
    }
    cpython::MappedModule& module = modules[entry->second];
    module.start = std::min(module.start, file.start);
    module.end = std::max(module.end, file.end);
  }
  return modules;
}

namespace {

// Enough for take_gil, pthread_mutex_lock or the collector under the innermost call; each frame
// costs gdb an unwind step (48 frames took 27 ms a thread on Debian's 3.11).
constexpr size_t kNativeFramesPerThread = 16;

class GdbUnwinding final : public analysis::NativeUnwinding {
 public:
  // gdb's names are the frames' only facts here: no Python frames are spliced in, which the
  // diagnosis does not need. A thread gdb cannot unwind is left out.
  native::MergedStacks merged(const cpython::ProcessStacks&, bool, const std::set<int64_t>* only) override {
    native::MergedStacks native;
    if (only == nullptr) return native;  // gdb's own bt prints every thread's stack
    for (ThreadWaitState& state : thread_wait_states(kNativeFramesPerThread, *only)) {
      if (state.frame_names.empty()) continue;
      native::MergedStack stack;
      stack.lwp = state.lwp;
      for (std::string& name : state.frame_names) {
        native::NativeFrame frame;
        frame.symbol = std::move(name);
        stack.frames.push_back(native::MergedFrame{frame, std::nullopt});
      }
      native.emplace(state.lwp, std::move(stack));
    }
    return native;
  }
};

}  // namespace

std::unique_ptr<analysis::NativeUnwinding> GdbTarget::native_unwinding(bool /*inlined_frames*/) const {
  return std::make_unique<GdbUnwinding>();
}

}  // namespace hangpy::gdbplugin
