// CPython 3.12 (x86-64, default build), read with `ptype /o` from the DWARF of a 3.12.1 build and
// checked against the v3.12.0, v3.12.1 and v3.12.14 headers (Include/internal/pycore_runtime.h,
// pycore_interp.h, pycore_frame.h, pycore_ceval_state.h, Include/cpython/pystate.h, code.h,
// unicodeobject.h): every offset below is the same across the series. Walked live on 3.12.1.
//
// What is peculiar to this version, and the fields that say it:
// - The GIL left _PyRuntime: PyInterpreterState.ceval.gil (gil.interpreter_gil = 384) points to a
//   _gil_runtime_state, in which gil.last_holder = 8 (PyThreadState *) and gil.locked = 16 (int).
//   For the main interpreter that pointer is &interp->_gil (the struct embedded at interp + 1040).
// - 3.12 has no is_entry (frame.is_entry kAbsent): the eval loop pushes a shim frame owned by
//   FRAME_OWNED_BY_CSTACK (frame.owner_by_c_stack = 3) under the first frame of every
//   _PyEval_EvalFrameDefault call. Its f_code is interp->interpreter_trampoline, a real code
//   object, so the walker skips it by owner and marks the frame above it as the entry.
// - There is no _Py_DebugOffsets (it begins in 3.13): this table is the only source of offsets.
#include "cpython/layouts/all_layouts.h"

namespace hangpy::cpython::layouts {

extern const Layout kPython312 = [] {
  Layout layout;
  layout.name = "3.12";
  layout.source_tag = "v3.12.1";
  layout.major = 3;
  layout.minor = 12;

  layout.runtime.interpreters_head = 40;  // interpreters { mutex; head; main; next_id }
  layout.runtime.finalizing = 24;  // _Py_atomic_address _finalizing, after 5 ints and padding
  // The GIL is per interpreter from 3.12 on: see gil.interpreter_gil below.

  layout.interpreter.next = 0;
  layout.interpreter.threads_head = 72;  // threads { next_unique_id; head; count; stacksize }
  layout.interpreter.id = 8;

  layout.thread_state.next = 8;
  layout.thread_state.interp = 16;
  layout.thread_state.thread_id = 136;
  layout.thread_state.native_thread_id = 144;
  layout.thread_state.frame_path[0] = 56;  // PyThreadState.cframe
  layout.thread_state.frame_path[1] = 0;   // _PyCFrame.current_frame

  layout.frame.model = FrameModel::kInterpreterFrame;
  layout.frame.instruction_kind = InstructionKind::kPrevInstr;
  layout.frame.code = 0;          // f_code (PyCodeObject *)
  layout.frame.previous = 8;
  layout.frame.instruction = 56;  // prev_instr
  layout.frame.owner = 70;        // char owner, after int stacktop and uint16_t return_offset
  layout.frame.localsplus = 72;
  layout.frame.owner_by_c_stack = 3;  // the eval loop's entry shim frames

  layout.code.line_table_kind = LineTableKind::kLocationTable;
  layout.code.first_line = 68;
  layout.code.filename = 112;
  layout.code.name = 120;
  layout.code.qualname = 128;
  layout.code.line_table = 136;     // co_linetable
  layout.code.code_adaptive = 192;  // co_code_adaptive

  layout.string.model = StringModel::kCompactPep393;
  layout.string.ascii_data = 40;    // sizeof(PyASCIIObject): wstr is gone from 3.12 on
  layout.string.compact_data = 56;  // sizeof(PyCompactUnicodeObject)
  layout.gil.interpreter_gil = 384;  // ceval.gil
  layout.gil.last_holder = 8;
  layout.gil.locked = 16;
  // Variables (py-locals, py-print, sys.version).
  layout.variables.frame_globals = 24;
  layout.variables.frame_builtins = 32;
  layout.variables.code_local_names = 96;  // co_localsplusnames
  layout.variables.code_local_count = 80;  // co_nlocals
  layout.variables.int_model = IntModel::kLvTag;
  layout.variables.dict_model = DictModel::kKeysLog2;
  layout.variables.keys_size = 8;  // dk_log2_size
  layout.variables.keys_log2_index_bytes = 9;
  layout.variables.keys_kind = 10;
  layout.variables.keys_entry_count = 24;
  layout.variables.keys_indices = 32;
  layout.variables.dict_values_array = 0;
  layout.interpreter.sysdict = 352;
  layout.instances.model = InstanceDictModel::kTaggedDictOrValues;
  layout.instances.heap_type_cached_keys = 880;
  // _gil_runtime_state after `locked`: switch_number, then cond (48 bytes), mutex (40),
  // switch_cond (48), switch_mutex (40), which GIL waiters sleep on.
  layout.gil.wait_begin = 32;
  layout.gil.wait_end = 208;
  // Modules/_threadmodule.c lockobject { PyObject_HEAD; PyThread_type_lock lock_lock; PyObject
  // *in_weakreflist; char locked; } and rlockobject { PyObject_HEAD; PyThread_type_lock rlock_lock;
  // unsigned long rlock_owner; unsigned long rlock_count; PyObject *in_weakreflist; }
  layout.locks.lock[0] = {.basicsize = 40, .model = LockModel::kSemaphorePointer, .lock = 16};
  layout.locks.rlock[0] = {.basicsize = 48, .model = LockModel::kSemaphorePointer, .lock = 16,
                           .owner = 24, .count = 32};
  // PyInterpreterState.gc.collecting (Include/internal/pycore_gc.h struct _gc_runtime_state), read with
  // `print &((...)0)->gc.collecting` from the DWARF of pyenv's 3.12 build.
  layout.gc.in_runtime = false;
  layout.gc.state = 112;
  layout.gc.collecting = 200;
  // asyncio (Modules/_asynciomodule.c FutureObj_HEAD / TaskObj): cr_code is gone (the frame's f_code
  // says it): cr_iframe at 72, cr_frame_state at 67. Tasks are registered in _scheduled_tasks (a
  // WeakSet) and, while eager, _eager_tasks (a set).
  // Offsets checked against live objects of pyenv/Debian builds (word scans with ctypes).
  layout.asyncio.task_sets[0] = "_scheduled_tasks";
  layout.asyncio.task_sets[1] = "_eager_tasks";
  layout.asyncio.future_state = 88;
  layout.asyncio.task_fut_waiter = 128;
  layout.asyncio.task_coro = 136;
  layout.asyncio.task_name = 144;
  layout.asyncio.coroutine_frame = 72;  // cr_iframe
  layout.asyncio.coroutine_frame_state = 67;
  layout.asyncio.suspended_state_low = -1;
  layout.asyncio.suspended_state_high = -1;
  layout.asyncio.stack_top_model = StackTopModel::kIndexFromLocalsplus;
  layout.asyncio.stack_top = 64;
  layout.asyncio.function_closure = 72;
  return layout;
}();

}  // namespace hangpy::cpython::layouts
