// CPython 3.8 (x86-64, default build), read with `ptype /o` from the DWARF of a 3.8.18 build;
// the v3.8.0..v3.8.18 header diffs (Include/internal/pycore_pystate.h, Include/cpython/pystate.h,
// frameobject.h, code.h) touch none of these fields (3.8.14 appended int_max_str_digits to the
// end of PyInterpreterState only). Walked live on 3.8.18.
//
// What is peculiar to this version, and the fields that say it:
// - PyThreadState has no native_thread_id (it is new in 3.11): the LWP is found by
//   fill_lwps_from_thread_pointers (analyzer.cpp), thread_id (pthread_self()) being the thread
//   pointer each LWP's fs_base holds. (threading.get_native_id(), new in 3.8, calls gettid();
//   the thread state does not keep the result.)
// - Lines come from co_lnotab (code.line_table, line_table_kind kLnotab); f_lineno (108) is kept
//   only while tracing and is not read.
#include "cpython/layouts/all_layouts.h"

namespace hangpy::cpython::layouts {

extern const Layout kPython38 = [] {
  Layout layout;
  layout.name = "3.8";
  layout.source_tag = "v3.8.18";
  layout.major = 3;
  layout.minor = 8;

  layout.runtime.interpreters_head = 32;  // interpreters { mutex; head; main; next_id }
  layout.runtime.finalizing = 16;  // PyThreadState *finalizing, after 4 ints
  layout.gil.last_holder = 1160;  // ceval.gil.last_holder
  layout.gil.locked = 1168;       // ceval.gil.locked

  layout.interpreter.next = 0;
  layout.interpreter.threads_head = 8;  // tstate_head
  layout.interpreter.id = 16;

  layout.thread_state.next = 8;
  layout.thread_state.interp = 16;
  layout.thread_state.thread_id = 176;
  layout.thread_state.frame_path[0] = 24;  // PyThreadState.frame

  layout.frame.model = FrameModel::kFrameObject;
  layout.frame.instruction_kind = InstructionKind::kLastiBytes;
  layout.frame.code = 32;          // f_code
  layout.frame.previous = 24;      // f_back
  layout.frame.instruction = 104;  // f_lasti
  layout.frame.localsplus = 360;   // f_localsplus

  layout.code.line_table_kind = LineTableKind::kLnotab;
  layout.code.first_line = 40;  // after co_posonlyargcount (new in 3.8)
  layout.code.filename = 104;
  layout.code.name = 112;
  layout.code.line_table = 120;  // co_lnotab

  layout.string.model = StringModel::kCompactPep393;
  layout.string.ascii_data = 48;    // sizeof(PyASCIIObject), with wstr
  layout.string.compact_data = 72;  // sizeof(PyCompactUnicodeObject)
  // Variables (py-locals, py-print, sys.version).
  layout.interpreter.sysdict = 72;
  layout.variables.frame_globals = 48;
  layout.variables.frame_builtins = 40;
  layout.variables.code_local_names = 72;  // co_varnames, then cells, then free variables
  layout.variables.code_cell_names = 88;
  layout.variables.code_free_names = 80;
  layout.variables.dict_model = DictModel::kKeysSize;
  layout.variables.keys_size = 8;          // dk_size
  layout.variables.keys_entry_count = 32;  // dk_nentries
  layout.variables.keys_indices = 40;
  // _gil_runtime_state after `locked`: switch_number, then cond (48 bytes), mutex (40),
  // switch_cond (48), switch_mutex (40), which GIL waiters sleep on.
  layout.gil.wait_begin = 1184;
  layout.gil.wait_end = 1360;
  // Modules/_threadmodule.c lockobject { PyObject_HEAD; PyThread_type_lock lock_lock; PyObject
  // *in_weakreflist; char locked; } and rlockobject { PyObject_HEAD; PyThread_type_lock rlock_lock;
  // unsigned long rlock_owner; unsigned long rlock_count; PyObject *in_weakreflist; }
  layout.locks.lock[0] = {.basicsize = 40, .model = LockModel::kSemaphorePointer, .lock = 16};
  layout.locks.rlock[0] = {.basicsize = 48, .model = LockModel::kSemaphorePointer, .lock = 16,
                           .owner = 24, .count = 32};
  // _PyRuntime.gc.collecting (Include/internal/pycore_gc.h struct _gc_runtime_state), read with
  // `print &((...)0)->gc.collecting` from the DWARF of pyenv's 3.8 build.
  layout.gc.in_runtime = true;
  layout.gc.state = 344;
  layout.gc.collecting = 200;
  // asyncio (Modules/_asynciomodule.c FutureObj_HEAD / TaskObj): As 3.7, with TaskObj.task_name
  // after task_coro.
  // Offsets checked against live objects of pyenv/Debian builds (word scans with ctypes).
  layout.asyncio.task_sets[0] = "_all_tasks";
  layout.asyncio.task_sets[1] = "";
  layout.asyncio.future_state = 72;
  layout.asyncio.task_fut_waiter = 104;
  layout.asyncio.task_coro = 112;
  layout.asyncio.task_name = 120;
  layout.asyncio.coroutine_frame_pointer = 16;  // cr_frame
  layout.asyncio.stack_top_model = StackTopModel::kPointerPastTop;
  layout.asyncio.stack_top = 72;
  layout.asyncio.function_closure = 48;
  return layout;
}();

}  // namespace hangpy::cpython::layouts
