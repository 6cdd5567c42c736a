#include "gdbplugin/thread_diagnosis.h"

#include "gdbplugin/gdb_api.h"
#include "gdbplugin/gdb_info.h"
#include "gdbplugin/python_error.h"

namespace hangpy::gdbplugin {
namespace {

// Enough for take_gil, pthread_mutex_lock or a c10d call under a few Python calls; deeper frames
// cost time on every thread and say little more.
constexpr size_t kNativeFramesPerThread = 48;

int64_t inferior_pid() {
  PyRef pid = checked(PyObject_GetAttrString(selected_inferior().get(), "pid"));
  int64_t value = PyLong_AsLongLong(pid.get());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    return 0;
  }
  return value;
}

}  // namespace

diagnosis::ProcessDiagnosis diagnose_process(const Analysis& analysis) {
  diagnosis::DiagnosisInput input;
  input.stacks = &*analysis.stacks;
  input.memory = &analysis.target->memory();
  input.pid = inferior_pid();
  diagnosis::NativeStacks native;
  for (ThreadWaitState& state : thread_wait_states(kNativeFramesPerThread)) {
    cpython::NativeThread thread;
    thread.lwp = state.lwp;
    thread.syscall = state.syscall;
    thread.syscall_arguments = state.syscall_arguments;
    input.os_threads.push_back(thread);
    // gdb's names are the frames' only facts here: no Python frames are spliced in, which the
    // diagnosis does not need (it reads Python frames from the analysis).
    native::MergedStack stack;
    stack.lwp = state.lwp;
    for (std::string& name : state.frame_names) {
      native::NativeFrame frame;
      frame.symbol = std::move(name);
      stack.frames.push_back(native::MergedFrame{frame, std::nullopt});
    }
    native.emplace(state.lwp, std::move(stack));
  }
  input.native = &native;
  return diagnosis::diagnose(input);
}

}  // namespace hangpy::gdbplugin
