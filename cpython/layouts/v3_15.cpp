// CPython 3.15 (x86-64, default build). No local build: the offsets were computed from the
// v3.15.0rc1 headers (the 3.15 branch head has the same Include/ apart from patchlevel.h) by
// compiling offsetof() probes against them with an x86-64 Linux pyconfig.h (no CPython build);
// the same probe reproduces the DWARF offsets of our 3.12.1 and 3.13.0 builds exactly.
// CAUTION: 3.15 moved fields between its betas (v3.15.0b1 had interpreters.head at 928 and
// thread_id at 168): re-check against the final v3.15.0 tag, and prefer _Py_DebugOffsets.
//
// What is peculiar to this version, and the fields that say it:
// - f_executable and the fast slots are _PyStackRef, tagged pointers: the object is
//   `bits & ~Py_TAG_BITS`, with Py_TAG_BITS = 3: frame.stack_ref_tag_mask = 3.
// - There is no FRAME_OWNED_BY_CSTACK any more (frame.owner_by_c_stack kAbsent): entry frames of
//   the eval loop and the per-thread base frame (PyThreadState.base_frame, offset 80, pointing
//   into _PyThreadStateImpl) are owned by FRAME_OWNED_BY_INTERPRETER
//   (frame.owner_by_interpreter = 3), with f_executable = None; the walker skips them by owner.
// - _Py_DebugOffsets at _PyRuntime + 0 (888 bytes, so runtime.interpreters_head = 936): cookie
//   "xdebugpy", version at 8, free_threaded at 16; read and preferred as from 3.13
//   (debug_offsets.cpp, prefer_debug_offsets in analyzer.cpp).
// - The GIL is per interpreter: PyInterpreterState.ceval.gil (gil.interpreter_gil = 16) points
//   to a _gil_runtime_state with gil.last_holder = 8 and gil.locked = 16 (int).
// - PyTupleObject caches its hash before ob_item, as from 3.14: variables.tuple_items = 32.
// Not used by hangpy: base_frame as an end marker (a complete chain ends there, so a chain that
// does not is truncated; the walker stops at a NULL `previous` and does not check it), the
// debug offsets' thread_state.holds_gil and base_frame, the per-thread PyThreadState.holds_gil
// (int, offset 36), which the GIL struct makes redundant, and the ELF section ".PyRuntime".
#include "cpython/layouts/all_layouts.h"

namespace hangpy::cpython::layouts {

extern const Layout kPython315 = [] {
  Layout layout;
  layout.name = "3.15";
  layout.source_tag = "v3.15.0rc1";
  layout.major = 3;
  layout.minor = 15;

  layout.runtime.interpreters_head = 936;  // after the 888-byte _Py_DebugOffsets
  layout.runtime.starts_with_debug_offsets = true;
  layout.runtime.finalizing = 912;  // PyThreadState *_finalizing; _finalizing_id; then interpreters
  // The GIL is per interpreter from 3.12 on: see gil.interpreter_gil below.

  layout.interpreter.next = 7264;
  layout.interpreter.threads_head = 7336;
  layout.interpreter.id = 7272;

  layout.thread_state.next = 8;
  layout.thread_state.interp = 16;
  layout.thread_state.thread_id = 176;
  layout.thread_state.native_thread_id = 184;
  layout.thread_state.frame_path[0] = 72;  // PyThreadState.current_frame

  layout.frame.model = FrameModel::kInterpreterFrame;
  layout.frame.instruction_kind = InstructionKind::kCurrentInstr;
  layout.frame.code = 0;          // f_executable: a tagged _PyStackRef (stack_ref_tag_mask)
  layout.frame.previous = 8;
  layout.frame.instruction = 56;  // instr_ptr
  layout.frame.owner = 74;
  layout.frame.localsplus = 80;
  layout.frame.owner_by_interpreter = 3;
  // FRAME_OWNED_BY_CSTACK is gone from 3.15's enum: owner_by_c_stack stays kAbsent.

  layout.code.line_table_kind = LineTableKind::kLocationTable;
  layout.code.first_line = 68;
  layout.code.filename = 112;
  layout.code.name = 120;
  layout.code.qualname = 128;
  layout.code.line_table = 136;     // co_linetable
  layout.code.code_adaptive = 208;  // co_code_adaptive

  layout.string.model = StringModel::kCompactPep393;
  layout.string.ascii_data = 40;    // sizeof(PyASCIIObject)
  layout.string.compact_data = 56;  // sizeof(PyCompactUnicodeObject)
  layout.gil.interpreter_gil = 16;  // ceval.gil
  layout.gil.last_holder = 8;
  layout.gil.locked = 16;
  layout.frame.stack_ref_tag_mask = 3;  // f_executable is a tagged _PyStackRef
  // Variables (py-locals, py-print, sys.version).
  layout.variables.frame_globals = 24;
  layout.variables.frame_builtins = 32;
  layout.variables.code_local_names = 96;  // co_localsplusnames
  layout.variables.code_local_count = 80;  // co_nlocals
  layout.variables.tuple_items = 32;  // ob_item follows the cached Py_hash_t ob_hash (new in 3.14)
  layout.variables.int_model = IntModel::kLvTag;
  layout.variables.dict_model = DictModel::kKeysLog2;
  layout.variables.keys_size = 8;  // dk_log2_size
  layout.variables.keys_log2_index_bytes = 9;
  layout.variables.keys_kind = 10;
  layout.variables.keys_entry_count = 24;
  layout.variables.keys_indices = 32;
  layout.variables.dict_values_array = 8;
  layout.instances.model = InstanceDictModel::kInlineValues;
  layout.instances.heap_type_cached_keys = 888;
  // _gil_runtime_state after `locked`: switch_number, then cond (48 bytes), mutex (40),
  // switch_cond (48), switch_mutex (40), which GIL waiters sleep on.
  layout.gil.wait_begin = 32;
  layout.gil.wait_end = 208;
  // Modules/_threadmodule.c lockobject { PyObject_HEAD; PyMutex lock; } and rlockobject
  // { PyObject_HEAD; _PyRecursiveMutex lock; } with _PyRecursiveMutex { PyMutex mutex;
  // PyThread_ident_t thread; size_t level; }: `level` counts the re-entries (count_bias = 1).
  layout.locks.lock[0] = {.basicsize = 24, .model = LockModel::kPyMutex, .lock = 16};
  layout.locks.rlock[0] = {.basicsize = 40, .model = LockModel::kPyMutex, .lock = 16, .owner = 24,
                           .count = 32, .count_bias = 1};
  // Python/parking_lot.c: struct wait_entry { void *park_arg; uintptr_t addr; _PySemaphore sema;
  // ... }, the semaphore a sem_t whose first word is the futex word.
  layout.locks.parked_address = -8;
  // asyncio (Modules/_asynciomodule.c FutureObj_HEAD / TaskObj): Frame states are renumbered from 0
  // (FRAME_CREATED 0; FRAME_SUSPENDED, _YIELD_FROM and _YIELD_FROM_LOCKED 1 to 3); thread state
  // asyncio fields at 1032 (running task) and 1048 (tasks head), interpreter's at 10856, as
  // .AsyncioDebug of Debian's 3.15.2 says.
  // Offsets checked against live objects of pyenv/Debian builds (word scans with ctypes).
  layout.asyncio.task_sets[0] = "_scheduled_tasks";
  layout.asyncio.task_sets[1] = "_eager_tasks";
  layout.asyncio.future_state = 104;
  layout.asyncio.task_fut_waiter = 120;
  layout.asyncio.task_coro = 128;
  layout.asyncio.task_name = 136;
  layout.asyncio.coroutine_frame = 72;  // cr_iframe
  layout.asyncio.coroutine_frame_state = 67;
  layout.asyncio.suspended_state_low = 1;
  layout.asyncio.suspended_state_high = 3;
  layout.asyncio.stack_top_model = StackTopModel::kPointerPastTop;
  layout.asyncio.stack_top = 64;
  layout.asyncio.function_closure = 72;
  layout.asyncio.thread_tasks_head = 1048;
  layout.asyncio.interpreter_tasks_head = 10856;
  layout.asyncio.thread_running_task = 1032;
  layout.asyncio.task_node = 152;
  return layout;
}();

}  // namespace hangpy::cpython::layouts
