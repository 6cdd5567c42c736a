// CPython 3.13 (x86-64, default build), read with `ptype /o` from the DWARF of a 3.13.0 build and
// checked against the v3.13.0 and v3.13.15 headers (Include/internal/pycore_runtime.h,
// pycore_interp.h, pycore_frame.h, pycore_ceval_state.h, Include/cpython/pystate.h, code.h,
// unicodeobject.h) and against the _Py_DebugOffsets values compiled into 3.13.0's _PyRuntime:
// every offset below is the same across the series. Walked live on 3.13.0.
//
// What is peculiar to this version, and the fields that say it:
// - _Py_DebugOffsets sits at _PyRuntime + 0 (584 bytes, so runtime.interpreters_head = 632):
//   cookie "xdebugpy" (8 chars, no NUL) at 0, version (uint64, PY_VERSION_HEX) at 8,
//   free_threaded (uint64) at 16, then sections of uint64 offsets (runtime_state,
//   interpreter_state, thread_state, interpreter_frame, code_object, pyobject, type_object, ...,
//   unicode_object, gc). read_debug_offsets (debug_offsets.cpp) reads and validates them, and
//   prefer_debug_offsets (analyzer.cpp) uses them over this table, noting any difference; without
//   the _PyRuntime symbol, find_debug_offsets_cookie (runtime_locator.cpp) finds the cookie.
// - The GIL is per interpreter: PyInterpreterState.ceval.gil (gil.interpreter_gil = 16) points to
//   a _gil_runtime_state with gil.last_holder = 8 (PyThreadState *) and gil.locked = 16 (int).
//   For the main interpreter it points at interp->_gil (embedded at interp + 7752); the debug
//   offsets' gil_runtime_state_locked = 7768 and _holder = 7760 are relative to the interpreter,
//   and layout_from_debug_offsets rebases them onto the GIL struct.
// - Entry frames: the eval loop pushes a shim frame owned by FRAME_OWNED_BY_CSTACK
//   (frame.owner_by_c_stack = 3) with f_executable = None; the walker skips it by owner.
// - f_executable is a plain PyObject * in 3.13 (frame.stack_ref_tag_mask = 0). It is a code
//   object for Python frames; StackWalker::code_info checks its type is "code" all the same.
// Not used by hangpy: the ELF section ".PyRuntime" that holds _PyRuntime (the symbol, the
// cookie search or a search of the data find it), and the holds_gil bit (bit 5) of
// PyThreadState._status (offset 32), which the interpreter's GIL struct makes redundant.
#include "cpython/layouts/all_layouts.h"

namespace hangpy::cpython::layouts {

extern const Layout kPython313 = [] {
  Layout layout;
  layout.name = "3.13";
  layout.source_tag = "v3.13.0";
  layout.major = 3;
  layout.minor = 13;

  layout.runtime.interpreters_head = 632;  // after the 584-byte _Py_DebugOffsets
  layout.runtime.starts_with_debug_offsets = true;
  layout.runtime.finalizing = 608;  // PyThreadState *_finalizing; _finalizing_id; then interpreters
  // The GIL is per interpreter from 3.12 on: see gil.interpreter_gil below.

  layout.interpreter.next = 7264;  // after the embedded struct _ceval_state
  layout.interpreter.threads_head = 7344;
  layout.interpreter.id = 7272;

  layout.thread_state.next = 8;
  layout.thread_state.interp = 16;
  layout.thread_state.thread_id = 152;
  layout.thread_state.native_thread_id = 160;
  layout.thread_state.frame_path[0] = 72;  // PyThreadState.current_frame (no _PyCFrame any more)

  layout.frame.model = FrameModel::kInterpreterFrame;
  layout.frame.instruction_kind = InstructionKind::kCurrentInstr;
  layout.frame.code = 0;          // f_executable (PyObject *)
  layout.frame.previous = 8;
  layout.frame.instruction = 56;  // instr_ptr
  layout.frame.owner = 70;
  layout.frame.localsplus = 72;
  layout.frame.owner_by_c_stack = 3;  // the eval loop's entry shim frames

  layout.code.line_table_kind = LineTableKind::kLocationTable;
  layout.code.first_line = 68;
  layout.code.filename = 112;
  layout.code.name = 120;
  layout.code.qualname = 128;
  layout.code.line_table = 136;     // co_linetable
  layout.code.code_adaptive = 200;  // co_code_adaptive (co_executors was added before it)

  layout.string.model = StringModel::kCompactPep393;
  layout.string.ascii_data = 40;    // sizeof(PyASCIIObject)
  layout.string.compact_data = 56;  // sizeof(PyCompactUnicodeObject)
  layout.gil.interpreter_gil = 16;  // ceval.gil
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
  layout.variables.dict_values_array = 8;
  layout.interpreter.sysdict = 7640;
  layout.instances.model = InstanceDictModel::kInlineValues;
  layout.instances.heap_type_cached_keys = 880;
  // _gil_runtime_state after `locked`: switch_number, then cond (48 bytes), mutex (40),
  // switch_cond (48), switch_mutex (40), which GIL waiters sleep on.
  layout.gil.wait_begin = 32;
  layout.gil.wait_end = 208;
  // Modules/_threadmodule.c lockobject { PyObject_HEAD; PyThread_type_lock lock_lock; PyObject
  // *in_weakreflist; char locked; } and rlockobject { PyObject_HEAD; PyThread_type_lock rlock_lock;
  // unsigned long rlock_owner; unsigned long rlock_count; PyObject *in_weakreflist; } (3.13.0 to 3.13.3
  // at least). Later 3.13 releases made Lock a PyMutex (lockobject { PyObject_HEAD; PyMutex lock; },
  // basicsize 24), measured on Debian's 3.13.5; tp_basicsize tells them apart.
  layout.locks.lock[0] = {.basicsize = 40, .model = LockModel::kSemaphorePointer, .lock = 16};
  layout.locks.rlock[0] = {.basicsize = 48, .model = LockModel::kSemaphorePointer, .lock = 16,
                           .owner = 24, .count = 32};
  layout.locks.lock[1] = {.basicsize = 24, .model = LockModel::kPyMutex, .lock = 16};
  // Python/parking_lot.c: struct wait_entry { void *park_arg; uintptr_t addr; _PySemaphore sema;
  // ... }, the semaphore a sem_t whose first word is the futex word.
  layout.locks.parked_address = -8;
  // PyInterpreterState.gc.collecting (Include/internal/pycore_gc.h struct _gc_runtime_state), read with
  // `print &((...)0)->gc.collecting` from the DWARF of pyenv's 3.13 build.
  layout.gc.in_runtime = false;
  layout.gc.state = 7400;
  layout.gc.collecting = 200;
  // asyncio (Modules/_asynciomodule.c FutureObj_HEAD / TaskObj): FutureObj_HEAD packs its flags
  // (fut_state at 96, Task fields from 112); frame states gain FRAME_SUSPENDED_YIELD_FROM: -2 and -1
  // are both suspended.
  // Offsets checked against live objects of pyenv/Debian builds (word scans with ctypes).
  layout.asyncio.task_sets[0] = "_scheduled_tasks";
  layout.asyncio.task_sets[1] = "_eager_tasks";
  layout.asyncio.future_state = 96;
  layout.asyncio.task_fut_waiter = 112;
  layout.asyncio.task_coro = 120;
  layout.asyncio.task_name = 128;
  layout.asyncio.coroutine_frame = 72;  // cr_iframe
  layout.asyncio.coroutine_frame_state = 67;
  layout.asyncio.suspended_state_low = -2;
  layout.asyncio.suspended_state_high = -1;
  layout.asyncio.stack_top_model = StackTopModel::kIndexFromLocalsplus;
  layout.asyncio.stack_top = 64;
  layout.asyncio.function_closure = 72;
  return layout;
}();

}  // namespace hangpy::cpython::layouts
