#include "gdbplugin/gdb_frames.h"

#include <algorithm>

#include "cpython/builtin_call.h"
#include "cpython/eval_groups.h"
#include "gdbplugin/gdb_api.h"
#include "gdbplugin/python_error.h"

namespace hangpy::gdbplugin {
namespace {

// A call that returns a gdb.Value or int as a number; nullopt (error cleared) when gdb cannot.
std::optional<uint64_t> number_from(PyObject* object, const char* method, const char* argument) {
  PyObject* value = argument ? PyObject_CallMethod(object, method, "s", argument)
                             : PyObject_CallMethod(object, method, nullptr);
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
  uint64_t result = PyLong_AsUnsignedLongLongMask(number);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return std::nullopt;
  }
  return result;
}

// The registers a called object may be in at a C function's first instructions: the argument
// registers and the callee-saved ones, of x86-64 and of aarch64 (a name the frame's architecture
// lacks reads nothing).
constexpr const char* kObjectRegisters[] = {
    "rdi", "rsi", "rdx", "rcx", "r8", "r9", "rbx", "rbp", "r12", "r13", "r14", "r15",
    "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28"};

bool waits_for_gil(std::string_view name) {
  // take_gil, and the clones LTO makes of it (take_gil.lto_priv.0).
  return name == "take_gil" || name.starts_with("take_gil.");
}

bool collects_garbage(std::string_view name) {
  return name == "collect" || name == "gc_collect_main" || name.starts_with("gc_collect_main.");
}

}  // namespace

std::vector<GdbFrame> selected_thread_frames(std::string_view eval_loop_function,
                                             size_t eval_loop_calls) {
  std::vector<GdbFrame> frames;
  size_t eval_frames = 0;
  PyObject* first = PyObject_CallMethod(gdb_module(), "newest_frame", nullptr);
  if (!first) {
    if (python_interrupt_pending()) throw PythonErrorSet();
    PyErr_Clear();  // no frames (no process, or gdb cannot unwind at all)
    return frames;
  }
  PyRef frame = PyRef::steal(first);
  while (frame && frame.get() != Py_None && frames.size() < kMaxNativeFrames) {
    GdbFrame found;
    auto pc = number_from(frame.get(), "pc", nullptr);
    auto sp = number_from(frame.get(), "read_register", "sp");
    if (!pc || !sp) break;
    found.pc = *pc;
    found.sp = *sp;
    if (PyObject* name = PyObject_CallMethod(frame.get(), "name", nullptr)) {
      PyRef name_ref = PyRef::steal(name);
      if (PyUnicode_Check(name)) {
        if (auto utf8 = utf8_of(name)) found.name = *utf8;
        else PyErr_Clear();
      }
    } else {
      PyErr_Clear();
    }
    if (frames.empty()) {  // registers of the innermost frame: what the thread is waiting in
      if (auto call = number_from(frame.get(), "read_register", "orig_rax")) found.syscall = static_cast<int64_t>(*call);
      if (auto rdi = number_from(frame.get(), "read_register", "rdi")) found.first_argument = *rdi;
      for (const char* name : kObjectRegisters)
        if (auto value = number_from(frame.get(), "read_register", name)) found.registers.push_back(*value);
    }
    if (found.name == eval_loop_function) ++eval_frames;
    frames.push_back(std::move(found));
    if (eval_frames >= eval_loop_calls) break;
    PyObject* older = PyObject_CallMethod(frame.get(), "older", nullptr);
    if (!older) {
      if (python_interrupt_pending()) throw PythonErrorSet();
      PyErr_Clear();  // gdb's unwinder gave up: keep what it found
      break;
    }
    frame = PyRef::steal(older);
  }
  return frames;
}

EvalLoopCalls eval_loop_calls(const std::vector<GdbFrame>& frames, const cpython::PythonThread& thread,
                              const cpython::ObjectReader& objects, std::string_view eval_loop_function,
                              const cpython::FunctionRanges* ranges,
                              std::optional<GilWaitRange> gil_wait) {
  EvalLoopCalls result;
  std::vector<size_t> eval_frames;
  for (size_t i = 0; i < frames.size(); ++i)
    if (frames[i].name == eval_loop_function) eval_frames.push_back(i);
  const auto frame_groups = cpython::eval_loop_groups(thread);
  const size_t groups = frame_groups.size();
  auto& lines = result.calls;
  size_t start = 0;
  for (size_t k = 0; k < groups && k < eval_frames.size(); ++k) {
    const size_t end = eval_frames[k];
    result.gdb_frames.push_back(end);
    lines.emplace_back();
    std::vector<uint64_t> pcs;
    for (size_t i = start; i < end; ++i) {
      pcs.push_back(frames[i].pc);
      if (waits_for_gil(frames[i].name)) lines[k].push_back({"Waiting for the GIL", i});
      else if (collects_garbage(frames[i].name)) lines[k].push_back({"Garbage-collecting", i});
    }
    if (start < end) {
      // The group's innermost Python frame makes the call; its value stack holds the callable.
      const cpython::FrameRange group = frame_groups[k];
      const auto value_stack =
          group.begin < thread.frames.size()
              ? cpython::value_stack_window(objects, thread.frames[group.begin], thread.frames,
                                            cpython::kValueStackScanSlots)
              : std::nullopt;
      for (const auto& call : cpython::find_builtin_calls(objects, frames[start].sp, frames[end].sp,
                                                          pcs, ranges, value_stack, frames[start].registers)) {
        // libpython names the frame that calls the C function (cfunction_call, wrapper_call):
        // the one just outside it, unless that is the eval loop's own.
        size_t frame = start + std::min(call.frame, pcs.size() - 1);
        if (frame + 1 < end) ++frame;
        lines[k].push_back({call.line, frame});
      }
    }
    std::stable_sort(lines[k].begin(), lines[k].end(),
                     [](const CallLine& a, const CallLine& b) { return a.gdb_frame < b.gdb_frame; });
    start = end + 1;
  }
  result.complete = groups > 0 && eval_frames.size() >= groups;
  // take_gil has no symbol in a stripped build (it is static): the wait is then told by the
  // thread's futex() on the GIL's own condition variable, as the diagnosis tells it.
  constexpr int64_t kFutexSyscall = 202;  // x86-64
  const bool named = !lines.empty() &&
                     std::any_of(lines[0].begin(), lines[0].end(),
                                 [](const CallLine& line) { return line.text == "Waiting for the GIL"; });
  if (!lines.empty() && !named && gil_wait && !frames.empty() && frames[0].syscall == kFutexSyscall &&
      frames[0].first_argument >= gil_wait->begin && frames[0].first_argument < gil_wait->end)
    lines[0].insert(lines[0].begin(), CallLine{"Waiting for the GIL", 0});
  return result;
}

std::vector<std::vector<std::string>> call_texts(const EvalLoopCalls& calls) {
  std::vector<std::vector<std::string>> texts;
  for (const auto& group : calls.calls) {
    texts.emplace_back();
    for (const CallLine& line : group) texts.back().push_back(line.text);
  }
  return texts;
}

}  // namespace hangpy::gdbplugin
