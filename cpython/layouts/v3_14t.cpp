// CPython 3.14t (x86-64, free-threaded build: Py_GIL_DISABLED). No local build: the offsets were
// computed from the v3.14.7 headers (same as v3.14.0 for every field below) by compiling
// offsetof() probes against them with Py_GIL_DISABLED and an x86-64 Linux pyconfig.h (no
// CPython build); the same probe reproduces our 3.12.1 and 3.13.0 DWARF offsets exactly.
//
// The object header is 32 bytes instead of 16: ob_tid (uintptr_t, 0), ob_flags (uint16_t, 8),
// ob_mutex (PyMutex, 10), ob_gc_bits (uint8_t, 11), ob_ref_local (uint32_t, 12), ob_ref_shared
// (Py_ssize_t, 16), ob_type (24); PyVarObject.ob_size follows at 32. Every object-relative offset
// moves by 16; the runtime, interpreter and thread-state structs keep their 3.14 offsets, but
// _PyInterpreterFrame gains int32_t tlbc_index (72), which moves owner to 78.
//
// What is peculiar to this build, and the fields that say it:
// - f_executable and the fast slots are _PyStackRef: the object is `bits & ~Py_TAG_BITS`,
//   Py_TAG_BITS = 1 in this build; the bit is set whenever the reference is deferred (objects
//   with deferred reference counting, or immortal ones), so expect it on code objects.
//   frame.stack_ref_tag_mask = 3 (safe for both 3.14 builds: objects are 8-byte aligned).
// - Thread-local bytecode (gh-115999): instr_ptr points into the thread's own copy of the
//   bytecode, ((_PyCodeArray *)code->co_tlbc)->entries[frame->tlbc_index], not always into
//   co_code_adaptive. code.thread_local_bytecode = 224 (co_tlbc; _PyCodeArray { Py_ssize_t size;
//   char *entries[] }, so entries at + 8) and frame.tlbc_index = 72 (int32); entries[0] is
//   co_code_adaptive (code.code_adaptive = 232). StackWalker::bytecode_of takes the instruction
//   offset from the thread's copy.
// - Entry frames are owned by FRAME_OWNED_BY_INTERPRETER (frame.owner_by_interpreter = 3);
//   FRAME_OWNED_BY_CSTACK (frame.owner_by_c_stack = 4) is never set by the 3.14 runtime. The
//   walker skips both values.
// - _Py_DebugOffsets at _PyRuntime + 0 (760 bytes, so runtime.interpreters_head = 808),
//   free_threaded (offset 16) = 1; it lists code_object.co_tlbc and interpreter_frame.tlbc_index,
//   which layout_from_debug_offsets (debug_offsets.cpp) takes for a free-threaded process.
// - The GIL: PyInterpreterState.ceval.gil (gil.interpreter_gil = 16) points to a
//   _gil_runtime_state starting with `int enabled` (gil.enabled = 0), then gil.last_holder = 16
//   and gil.locked = 24; normally disabled, and read_gil (analyzer.cpp) reports no holder while
//   enabled == 0.
// - The PyASCIIObject state differs from the default build: `interned` is a whole byte
//   (unsigned char, bits 0-7, read atomically), so string.kind_shift = 8, compact_shift = 11,
//   ascii_shift = 12.
// - PyTupleObject caches its hash before ob_item: variables.tuple_items = 32 + 16 for the header.
// Not used by hangpy: PyThreadState.holds_gil (int, offset 36), which the GIL struct makes
// redundant.
#include "cpython/layouts/all_layouts.h"

namespace hangpy::cpython::layouts {

extern const Layout kPython314t = [] {
  Layout layout;
  layout.name = "3.14t";
  layout.source_tag = "v3.14.7";
  layout.major = 3;
  layout.minor = 14;
  layout.free_threaded = true;

  layout.object.ob_refcnt = kAbsent;  // ob_ref_local and ob_ref_shared
  layout.object.ob_type = 24;  // after ob_tid, ob_flags, ob_mutex, ob_gc_bits, ob_ref_local,
                               // ob_ref_shared
  layout.object.ob_size = 32;
  layout.object.tp_name = 40;

  layout.runtime.interpreters_head = 808;
  layout.runtime.starts_with_debug_offsets = true;
  layout.runtime.finalizing = 784;  // PyThreadState *_finalizing; _finalizing_id; then interpreters
  // The GIL is per interpreter (and usually disabled): see gil.interpreter_gil below.

  layout.interpreter.next = 7272;
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
  layout.frame.instruction = 56;  // instr_ptr, into the thread's bytecode (tlbc_index)
  layout.frame.owner = 78;        // after stackpointer (64), tlbc_index (72), return_offset (76)
  layout.frame.localsplus = 80;
  layout.frame.owner_by_interpreter = 3;
  layout.frame.owner_by_c_stack = 4;  // in the enum, though the 3.14 runtime never sets it

  layout.code.line_table_kind = LineTableKind::kLocationTable;
  layout.code.first_line = 84;
  layout.code.filename = 128;
  layout.code.name = 136;
  layout.code.qualname = 144;
  layout.code.line_table = 152;     // co_linetable
  layout.code.code_adaptive = 232;  // co_code_adaptive, after co_tlbc (224)
  layout.code.thread_local_bytecode = 224;
  layout.frame.tlbc_index = 72;

  layout.bytes.size = 32;  // ob_size
  layout.bytes.data = 48;  // ob_sval

  layout.string.model = StringModel::kCompactPep393;
  layout.string.length = 32;
  layout.string.state = 48;
  layout.string.kind_shift = 8;     // `interned` is a whole byte in this build
  layout.string.compact_shift = 11;
  layout.string.ascii_shift = 12;
  layout.string.ascii_data = 56;    // sizeof(PyASCIIObject)
  layout.string.compact_data = 72;  // sizeof(PyCompactUnicodeObject)
  layout.gil.interpreter_gil = 16;  // ceval.gil
  layout.gil.enabled = 0;
  layout.gil.last_holder = 16;
  layout.gil.locked = 24;
  layout.frame.stack_ref_tag_mask = 3;  // f_executable is a tagged _PyStackRef
  // Variables (py-locals, py-print, sys.version).
  layout.variables.frame_globals = 24;
  layout.variables.frame_builtins = 32;
  layout.variables.code_local_names = 112;  // co_localsplusnames
  layout.variables.code_local_count = 96;  // co_nlocals
  layout.variables.tuple_items = 32;  // ob_item follows the cached Py_hash_t ob_hash (new in 3.14)
  layout.variables.int_model = IntModel::kLvTag;
  layout.variables.dict_model = DictModel::kKeysLog2;
  layout.variables.keys_size = 8;  // dk_log2_size
  layout.variables.keys_log2_index_bytes = 9;
  layout.variables.keys_kind = 10;
  layout.variables.keys_entry_count = 24;
  layout.variables.keys_indices = 32;
  layout.variables.dict_values_array = 8;
  // Free-threaded objects have a 16-byte larger header: every field after it moves.
  layout.variables.tuple_items += 16;
  layout.variables.list_items += 16;
  layout.variables.cell_reference += 16;
  layout.variables.float_value += 16;
  layout.variables.module_dict += 16;
  layout.variables.int_size += 16;
  layout.variables.int_digits += 16;
  layout.variables.dict_used += 16;
  layout.variables.dict_keys += 16;
  layout.variables.dict_values += 16;
  layout.instances.model = InstanceDictModel::kInlineValues;
  layout.instances.managed_dict = -8;  // MANAGED_DICT_OFFSET is one word before a free-threaded object
  layout.instances.type_basicsize = 48;  // type objects have the bigger header too
  layout.instances.type_call = 144;
  layout.instances.type_flags = 184;
  layout.instances.type_dictoffset = 304;
  layout.instances.type_base = 272;
  layout.instances.type_members = 256;
  layout.instances.heap_type_cached_keys = 896;
  // _gil_runtime_state after `locked` (at 24 here): switch_number, then cond (48 bytes), mutex
  // (40), switch_cond (48), switch_mutex (40).
  layout.gil.wait_begin = 40;
  layout.gil.wait_end = 216;
  // Modules/_threadmodule.c (v3.14.7) lockobject { PyObject_HEAD; PyMutex lock; } and rlockobject
  // { PyObject_HEAD; _PyRecursiveMutex lock; } with _PyRecursiveMutex { PyMutex mutex;
  // PyThread_ident_t thread; size_t level; }, after the 32-byte free-threaded header; `level`
  // counts the re-entries (count_bias = 1).
  layout.locks.lock[0] = {.basicsize = 40, .model = LockModel::kPyMutex, .lock = 32};
  layout.locks.rlock[0] = {.basicsize = 56, .model = LockModel::kPyMutex, .lock = 32, .owner = 40,
                           .count = 48, .count_bias = 1};
  // Python/parking_lot.c: struct wait_entry { void *park_arg; uintptr_t addr; _PySemaphore sema;
  // ... }, the semaphore a sem_t whose first word is the futex word.
  layout.locks.parked_address = -8;
  // Built-in callables and exceptions: object fields, moved by the bigger header.
  for (int32_t* field : {&layout.callables.cfunction_method_def, &layout.callables.cfunction_self,
                         &layout.callables.method_wrapper_descriptor,
                         &layout.callables.method_wrapper_self,
                         &layout.callables.wrapper_descriptor_base,
                         &layout.callables.wrapper_descriptor_wrapped,
                         &layout.callables.exception_args})
    *field += 16;
  // asyncio (Modules/_asynciomodule.c FutureObj_HEAD / TaskObj, Include/internal/
  // pycore_genobject.h, pycore_tstate.h): offsetof() probes compiled against v3.14.7's headers
  // configured with --disable-gil. Native tasks live in per-thread lists
  // (_PyThreadStateImpl.asyncio_tasks_head at 880, PyInterpreterState.asyncio_tasks_head at
  // 17632, TaskObj.task_node at 168; a process's .AsyncioDebug section wins when found), the sets
  // hold only other tasks; frames keep a stackpointer (64) one past the top slot.
  layout.asyncio.task_sets[0] = "_scheduled_tasks";
  layout.asyncio.task_sets[1] = "_eager_tasks";
  layout.asyncio.future_state = 120;
  layout.asyncio.task_fut_waiter = 136;
  layout.asyncio.task_coro = 144;
  layout.asyncio.task_name = 152;
  layout.asyncio.coroutine_frame = 88;  // cr_iframe
  layout.asyncio.coroutine_frame_state = 83;
  layout.asyncio.suspended_state_low = -2;
  layout.asyncio.suspended_state_high = -1;
  layout.asyncio.stack_top_model = StackTopModel::kPointerPastTop;
  layout.asyncio.stack_top = 64;
  layout.asyncio.function_closure = 88;
  layout.asyncio.thread_tasks_head = 880;
  layout.asyncio.interpreter_tasks_head = 17632;
  layout.asyncio.thread_running_task = 872;
  layout.asyncio.task_node = 168;
  // asyncio's reader follows these object fields, whose defaults are the 16-byte header's.
  for (int32_t* field : {&layout.asyncio.future_loop, &layout.asyncio.future_callback0,
                         &layout.asyncio.future_callbacks, &layout.asyncio.future_iter_future,
                         &layout.asyncio.set_mask, &layout.asyncio.set_table,
                         &layout.asyncio.weakref_object, &layout.asyncio.method_self,
                         &layout.asyncio.method_function})
    *field += 16;
  return layout;
}();

}  // namespace hangpy::cpython::layouts
