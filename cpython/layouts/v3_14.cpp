// CPython 3.14 (x86-64, default build). No local build: the offsets were computed from the
// v3.14.7 headers (Include/internal/pycore_runtime_structs.h, pycore_interp_structs.h,
// pycore_interpframe_structs.h, pycore_debug_offsets.h, pycore_stackref.h, Include/cpython/
// pystate.h, code.h, unicodeobject.h) by compiling offsetof() probes against them with an x86-64
// Linux pyconfig.h (no CPython build); the same probe reproduces the DWARF offsets of our 3.12.1
// and 3.13.0 builds exactly. v3.14.0 gives the same values for every field below (only the
// embedded interp->_gil moved, 7760 -> 7784, which this table does not use).
//
// What is peculiar to this version, and the fields that say it:
// - f_executable and the fast slots are _PyStackRef, tagged pointers (gh-117139): the object is
//   `bits & ~Py_TAG_BITS`, Py_TAG_BITS = 3 in the default build (bit 0 = Py_TAG_REFCNT, set when
//   the reference is not counted, e.g. for an immortal code object; tag 3 = tagged int, never an
//   f_executable). frame.stack_ref_tag_mask = 3 clears them; read raw, `code` would land 1 byte
//   off when the bit is set.
// - Entry frames: the eval loop's entry frame (ceval.c: entry.frame.owner) is owned by
//   FRAME_OWNED_BY_INTERPRETER (frame.owner_by_interpreter = 3) with f_executable = None;
//   FRAME_OWNED_BY_CSTACK (frame.owner_by_c_stack = 4) is in the enum but the 3.14 runtime never
//   sets it. The walker skips both values, as CPython's own remote unwinder does.
// - _Py_DebugOffsets at _PyRuntime + 0 (760 bytes, so runtime.interpreters_head = 808): cookie
//   "xdebugpy", version at 8 (PY_VERSION_HEX), free_threaded at 16; read and preferred as in
//   3.13 (debug_offsets.cpp, prefer_debug_offsets in analyzer.cpp).
// - The GIL is per interpreter: PyInterpreterState.ceval.gil (gil.interpreter_gil = 16) points
//   to a _gil_runtime_state with gil.last_holder = 8 and gil.locked = 16 (int).
// - PyTupleObject caches its hash (Py_hash_t ob_hash) before ob_item: variables.tuple_items = 32.
// Not used by hangpy: the ELF section ".PyRuntime" that holds _PyRuntime (the symbol, the
// cookie search or a search of the data find it), and the per-thread PyThreadState.holds_gil
// (int, offset 36), which the interpreter's GIL struct makes redundant.
#include "cpython/layouts/all_layouts.h"

namespace hangpy::cpython::layouts {

extern const Layout kPython314 = [] {
  Layout layout;
  layout.name = "3.14";
  layout.source_tag = "v3.14.7";
  layout.major = 3;
  layout.minor = 14;

  layout.runtime.interpreters_head = 808;  // after the 760-byte _Py_DebugOffsets
  layout.runtime.starts_with_debug_offsets = true;
  layout.runtime.finalizing = 784;  // PyThreadState *_finalizing; _finalizing_id; then interpreters
  // The GIL is per interpreter from 3.12 on: see gil.interpreter_gil below.

  layout.interpreter.next = 7272;  // after the embedded struct _ceval_state
  layout.interpreter.threads_head = 7344;
  layout.interpreter.id = 7280;

  layout.thread_state.next = 8;
  layout.thread_state.interp = 16;
  layout.thread_state.thread_id = 152;
  layout.thread_state.native_thread_id = 160;
  layout.thread_state.frame_path[0] = 72;  // PyThreadState.current_frame

  layout.frame.model = FrameModel::kInterpreterFrame;
  layout.frame.instruction_kind = InstructionKind::kCurrentInstr;
  layout.frame.code = 0;          // f_executable: a tagged _PyStackRef (stack_ref_tag_mask)
  layout.frame.previous = 8;
  layout.frame.instruction = 56;  // instr_ptr
  layout.frame.owner = 74;        // after _PyStackRef *stackpointer (64) and return_offset (72)
  layout.frame.localsplus = 80;
  layout.frame.owner_by_interpreter = 3;
  layout.frame.owner_by_c_stack = 4;  // in the enum, though the 3.14 runtime never sets it

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
  layout.instances.heap_type_cached_keys = 880;
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
  // asyncio (Modules/_asynciomodule.c FutureObj_HEAD / TaskObj): Native tasks live in per-thread
  // lists (_PyThreadStateImpl.asyncio_tasks_head at 880, PyInterpreterState.asyncio_tasks_head at
  // 10880, TaskObj.task_node at 152; the same values as the .AsyncioDebug section of Debian's
  // 3.14.10 _asyncio module), the sets hold only other tasks; frames keep a stackpointer (64) one
  // past the top slot.
  // Offsets checked against live objects of pyenv/Debian builds (word scans with ctypes).
  layout.asyncio.task_sets[0] = "_scheduled_tasks";
  layout.asyncio.task_sets[1] = "_eager_tasks";
  layout.asyncio.future_state = 104;
  layout.asyncio.task_fut_waiter = 120;
  layout.asyncio.task_coro = 128;
  layout.asyncio.task_name = 136;
  layout.asyncio.coroutine_frame = 72;  // cr_iframe
  layout.asyncio.coroutine_frame_state = 67;
  layout.asyncio.suspended_state_low = -2;
  layout.asyncio.suspended_state_high = -1;
  layout.asyncio.stack_top_model = StackTopModel::kPointerPastTop;
  layout.asyncio.stack_top = 64;
  layout.asyncio.function_closure = 72;
  layout.asyncio.thread_tasks_head = 880;
  layout.asyncio.interpreter_tasks_head = 10880;
  layout.asyncio.thread_running_task = 872;
  layout.asyncio.task_node = 152;
  return layout;
}();

}  // namespace hangpy::cpython::layouts
