#include "gdbplugin/gdb_info.h"

#include <cctype>
#include <regex>
#include <string_view>

#include "gdbplugin/gdb_api.h"
#include "gdbplugin/python_error.h"

namespace hangpy::gdbplugin {
namespace {

// gdb.execute(command, to_string=True); nullopt when gdb refuses the command.
std::optional<std::string> execute_to_string(const char* command) {
  PyRef args = checked(Py_BuildValue("(sOO)", command, Py_False, Py_True));
  PyRef function = checked(PyObject_GetAttrString(gdb_module(), "execute"));
  PyObject* output = PyObject_Call(function.get(), args.get(), nullptr);
  if (!output) {
    if (python_interrupt_pending()) throw PythonErrorSet();
    PyErr_Clear();
    return std::nullopt;
  }
  PyRef output_ref = PyRef::steal(output);
  std::optional<std::string> text;
  if (PyUnicode_Check(output)) text = utf8_of(output);
  if (!text) PyErr_Clear();
  return text;
}

// gdb.Inferior.connection (gdb 12 on) says "core" for a core file; without it, `info target`
// alone tells.
bool may_be_core() {
  PyRef inferior = selected_inferior();
  PyObject* connection = PyObject_GetAttrString(inferior.get(), "connection");
  if (!connection) {
    PyErr_Clear();
    return true;
  }
  PyRef connection_ref = PyRef::steal(connection);
  if (connection == Py_None) return false;
  PyObject* type = PyObject_GetAttrString(connection, "type");
  if (!type) {
    PyErr_Clear();
    return true;
  }
  PyRef type_ref = PyRef::steal(type);
  return PyUnicode_Check(type) && PyUnicode_CompareWithASCIIString(type, "core") == 0;
}

// A gdb.Value as an address; nullopt with the Python error set when it is none (unavailable).
std::optional<uint64_t> value_as_address(PyObject* value) {
  PyObject* number = PyNumber_Long(value);
  if (!number) return std::nullopt;
  PyRef number_ref = PyRef::steal(number);
  uint64_t result = PyLong_AsUnsignedLongLong(number);
  if (PyErr_Occurred()) return std::nullopt;
  return result;
}

// gdb's selected thread and frame, put back when this goes out of scope (an exception already
// set stays set).
class SelectionRestorer {
 public:
  SelectionRestorer() : thread_(gdb_call("selected_thread")) {
    PyObject* frame = PyObject_CallMethod(gdb_module(), "selected_frame", nullptr);
    if (frame) {
      frame_ = PyRef::steal(frame);
    } else {
      PyErr_Clear();  // "No stack."
    }
  }
  SelectionRestorer(const SelectionRestorer&) = delete;
  SelectionRestorer& operator=(const SelectionRestorer&) = delete;
  ~SelectionRestorer() {
    PyObject* type;
    PyObject* value;
    PyObject* traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (thread_.get() != Py_None) call(thread_.get(), "switch");
    if (frame_) call(frame_.get(), "select");
    PyErr_Restore(type, value, traceback);
  }

 private:
  static void call(PyObject* object, const char* method) {
    PyObject* result = PyObject_CallMethod(object, method, nullptr);
    if (result) {
      Py_DECREF(result);
    } else {
      PyErr_Clear();
    }
  }

  PyRef thread_;
  PyRef frame_;
};

}  // namespace

std::optional<std::string> core_file_path() {
  if (!may_be_core()) return std::nullopt;
  // "Local core dump file:\n\t`/path/to/core', file type elf64-x86-64.\n" (gdb's exec.c
  // print_section_info, under corelow.c's target name).
  auto text = execute_to_string("info target");
  if (!text) return std::nullopt;
  constexpr std::string_view kHeading = "Local core dump file:";
  size_t heading = text->find(kHeading);
  if (heading == std::string::npos) return std::nullopt;
  size_t open = text->find('`', heading + kHeading.size());
  size_t close = text->find("', file type", open == std::string::npos ? heading : open);
  if (open == std::string::npos || close == std::string::npos) return std::nullopt;
  return text->substr(open + 1, close - open - 1);
}

std::vector<MappedFile> mapped_files() {
  // "  0x400000  0x41f000  0x1f000  0x0  [r-xp]  /usr/bin/python3.11" (gdb's linux-tdep.c; live
  // processes have the Perms column, cores do not; anonymous mappings have no path).
  static const std::regex kMapping(
      R"(^\s*0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x[0-9a-f]+\s+(?:[r-][w-][x-][ps-]\s+)?(\S.*)$)");
  std::vector<MappedFile> files;
  auto text = execute_to_string("info proc mappings");
  if (!text) return files;
  size_t at = 0;
  while (at < text->size()) {
    size_t end = text->find('\n', at);
    if (end == std::string::npos) end = text->size();
    std::string line = text->substr(at, end - at);
    at = end + 1;
    std::smatch match;
    if (!std::regex_match(line, match, kMapping)) continue;
    MappedFile file;
    file.start = std::stoull(match[1].str(), nullptr, 16);
    file.end = std::stoull(match[2].str(), nullptr, 16);
    file.path = match[3].str();
    // gdb 16 pads the last column of a core's mappings with a space.
    while (!file.path.empty() && std::isspace(static_cast<unsigned char>(file.path.back()))) {
      file.path.pop_back();
    }
    files.push_back(std::move(file));
  }
  return files;
}

std::vector<uint64_t> fs_base_registers(const std::vector<PyRef>& threads) {
  std::vector<uint64_t> values(threads.size(), 0);
  if (threads.empty()) return values;
  SelectionRestorer restore;
  PyRef expression = checked(Py_BuildValue("(s)", "$fs_base"));
  PyRef parse_and_eval = checked(PyObject_GetAttrString(gdb_module(), "parse_and_eval"));
  for (size_t i = 0; i < threads.size(); ++i) {
    PyObject* switched = PyObject_CallMethod(threads[i].get(), "switch", nullptr);
    PyObject* value = switched ? PyObject_Call(parse_and_eval.get(), expression.get(), nullptr)
                               : nullptr;
    Py_XDECREF(switched);
    PyRef value_ref = PyRef::steal(value);
    std::optional<uint64_t> address = value ? value_as_address(value) : std::nullopt;
    if (!address) {
      if (python_interrupt_pending()) throw PythonErrorSet();
      PyErr_Clear();  // no registers for this thread (or no fs_base on this architecture)
      continue;
    }
    values[i] = *address;
  }
  return values;
}

namespace {

// A register of the selected thread as a signed number; nullopt when gdb has none.
std::optional<int64_t> register_value(PyObject* parse_and_eval, const char* name) {
  PyRef expression = checked(Py_BuildValue("(s)", name));
  PyObject* value = PyObject_Call(parse_and_eval, expression.get(), nullptr);
  if (!value) {
    if (python_interrupt_pending()) throw PythonErrorSet();
    PyErr_Clear();
    return std::nullopt;
  }
  PyRef value_ref = PyRef::steal(value);
  PyObject* number = PyNumber_Long(value);
  if (!number) {
    PyErr_Clear();
    return std::nullopt;
  }
  PyRef number_ref = PyRef::steal(number);
  int64_t result = PyLong_AsLongLong(number);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    result = static_cast<int64_t>(PyLong_AsUnsignedLongLongMask(number));
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return std::nullopt;
    }
  }
  return result;
}

// The names of the selected thread's innermost frames, from gdb's unwinder.
std::vector<std::string> frame_names(size_t max_frames) {
  std::vector<std::string> names;
  PyObject* frame = PyObject_CallMethod(gdb_module(), "newest_frame", nullptr);
  while (frame && frame != Py_None && names.size() < max_frames) {
    PyRef frame_ref = PyRef::steal(frame);
    PyObject* name = PyObject_CallMethod(frame, "name", nullptr);
    std::optional<std::string> text;
    if (name && PyUnicode_Check(name)) text = utf8_of(name);
    names.push_back(text ? *text : "");
    Py_XDECREF(name);
    PyErr_Clear();
    frame = PyObject_CallMethod(frame, "older", nullptr);
  }
  if (frame) {
    Py_DECREF(frame);  // None, or the frame beyond max_frames
  } else {
    if (python_interrupt_pending()) throw PythonErrorSet();
    PyErr_Clear();
  }
  return names;
}

}  // namespace

// An aarch64 thread (gdb-multiarch on an aarch64 core): in a system call when `svc #0` is the
// instruction at its pc (a call the kernel rewound to restart) or the one before (qemu's cores),
// then x8 is the call and x0-x5 its arguments; x0 holding -errno means the call already ended
// and its first argument is gone (targets/machine_registers.h says the same of cores).
namespace {

void read_aarch64_syscall(PyObject* parse_and_eval, ThreadWaitState& state) {
  constexpr int64_t kSvc = 0xd4000001;
  state.machine = cpython::Machine::kAarch64;
  const bool in_call = register_value(parse_and_eval, "*(unsigned int *) $pc") == kSvc ||
                       register_value(parse_and_eval, "*(unsigned int *) ($pc - 4)") == kSvc;
  if (!in_call) return;
  state.syscall = register_value(parse_and_eval, "$x8").value_or(-1);
  static constexpr std::array<const char*, 6> kArguments = {"$x0", "$x1", "$x2", "$x3", "$x4", "$x5"};
  for (size_t a = 0; a < kArguments.size(); ++a)
    state.syscall_arguments[a] = static_cast<uint64_t>(register_value(parse_and_eval, kArguments[a]).value_or(0));
  const auto x0 = static_cast<int64_t>(state.syscall_arguments[0]);
  if (x0 < 0 && x0 >= -4095) {
    state.syscall_arguments_lost = true;
    state.syscall_arguments = {};
  }
}

}  // namespace

std::vector<ThreadWaitState> thread_wait_states(size_t max_frames, const std::set<int64_t>& frames_for) {
  std::vector<ThreadWaitState> states;
  SelectionRestorer restore;
  PyRef parse_and_eval = checked(PyObject_GetAttrString(gdb_module(), "parse_and_eval"));
  PyRef list = checked(PyObject_CallMethod(selected_inferior().get(), "threads", nullptr));
  PyRef sequence = checked(PySequence_Tuple(list.get()));
  static constexpr std::array<const char*, 6> kArguments = {"$rdi", "$rsi", "$rdx",
                                                            "$r10", "$r8",  "$r9"};
  for (Py_ssize_t i = 0; i < PyTuple_Size(sequence.get()); ++i) {
    PyObject* thread = PyTuple_GetItem(sequence.get(), i);
    ThreadWaitState state;
    PyRef ptid = checked(PyObject_GetAttrString(thread, "ptid"));
    if (PyTuple_Check(ptid.get()) && PyTuple_Size(ptid.get()) >= 2)
      state.lwp = PyLong_AsLongLong(PyTuple_GetItem(ptid.get(), 1));
    if (PyErr_Occurred()) throw PythonErrorSet();
    PyObject* switched = PyObject_CallMethod(thread, "switch", nullptr);
    if (!switched) {
      if (python_interrupt_pending()) throw PythonErrorSet();
      PyErr_Clear();
      states.push_back(state);
      continue;
    }
    Py_DECREF(switched);
    if (const std::optional<int64_t> orig_rax = register_value(parse_and_eval.get(), "$orig_rax")) {
      state.syscall = *orig_rax;
      for (size_t a = 0; a < kArguments.size(); ++a)
        state.syscall_arguments[a] = static_cast<uint64_t>(register_value(parse_and_eval.get(), kArguments[a]).value_or(0));
    } else if (register_value(parse_and_eval.get(), "$x8")) {
      read_aarch64_syscall(parse_and_eval.get(), state);
    }
    if (frames_for.contains(state.lwp)) state.frame_names = frame_names(max_frames);
    states.push_back(std::move(state));
  }
  return states;
}

}  // namespace hangpy::gdbplugin
