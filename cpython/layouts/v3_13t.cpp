// CPython 3.13t (x86-64, free-threaded build: Py_GIL_DISABLED). No local build: the offsets were
// computed from the v3.13.15 headers (same as v3.13.0 for every field below) by compiling
// offsetof() probes against them with Py_GIL_DISABLED and an x86-64 Linux pyconfig.h (no
// CPython build); the same probe without Py_GIL_DISABLED reproduces our 3.13.0 DWARF offsets.
//
// The object header is 32 bytes instead of 16: ob_tid (uintptr_t, 0), _padding (uint16_t, 8),
// ob_mutex (PyMutex, 10), ob_gc_bits (uint8_t, 11), ob_ref_local (uint32_t, 12), ob_ref_shared
// (Py_ssize_t, 16), ob_type (24); PyVarObject.ob_size follows at 32. Every object-relative offset
// (type, code, bytes, str) moves by 16; the runtime, interpreter, thread-state and
// interpreter-frame structs are not objects and keep their 3.13 offsets.
//
// What is peculiar to this build, and the fields that say it:
// - free_threaded = true. _Py_DebugOffsets sits at _PyRuntime + 0 (584 bytes), as in 3.13, with
//   free_threaded (offset 16) = 1: find_layout matches tables on `free_threaded`, which comes
//   from the file name (libpython3.13t.so, version_probe.cpp) and, when the process states it,
//   from the debug offsets (prefer_debug_offsets, analyzer.cpp), so a 3.13 default table is not
//   used on this build nor this one on a default build.
// - The GIL: PyInterpreterState.ceval.gil (gil.interpreter_gil = 16) points to a
//   _gil_runtime_state that in this build starts with `int enabled` (gil.enabled = 0), then
//   gil.last_holder = 16 and gil.locked = 24. The GIL is normally disabled (PYTHON_GIL=1 or an
//   extension without Py_mod_gil turns it on): read_gil (analyzer.cpp) reports no holder
//   while enabled == 0.
// - Entry frames: shim frames owned by FRAME_OWNED_BY_CSTACK (frame.owner_by_c_stack = 3), as in
//   3.13.
// - f_executable is still a plain PyObject * in 3.13t (frame.stack_ref_tag_mask = 0; stack refs
//   begin in 3.14).
// - The PyASCIIObject state bitfield is the same as the default build in 3.13 (interned:2,
//   kind:3 at bit 2, compact at 5, ascii at 6): string.kind_shift, compact_shift, ascii_shift;
//   string.state and the other object offsets move by 16 with the header.
// Not used by hangpy: the _status.holds_gil bit of PyThreadState (offset 32, bit 5), which the
// GIL struct makes redundant.
#include "cpython/layouts/all_layouts.h"

namespace hangpy::cpython::layouts {

extern const Layout kPython313t = [] {
  Layout layout;
  layout.name = "3.13t";
  layout.source_tag = "v3.13.15";
  layout.major = 3;
  layout.minor = 13;
  layout.free_threaded = true;

  layout.object.ob_refcnt = kAbsent;  // ob_ref_local and ob_ref_shared
  layout.object.ob_type = 24;  // after ob_tid, _padding, ob_mutex, ob_gc_bits, ob_ref_local,
                               // ob_ref_shared
  layout.object.ob_size = 32;
  layout.object.tp_name = 40;

  layout.runtime.interpreters_head = 632;
  layout.runtime.starts_with_debug_offsets = true;
  layout.runtime.finalizing = 608;  // PyThreadState *_finalizing; _finalizing_id; then interpreters
  // The GIL is per interpreter (and usually disabled): see gil.interpreter_gil below.

  layout.interpreter.next = 7264;
  layout.interpreter.threads_head = 7344;
  layout.interpreter.id = 7272;

  layout.thread_state.next = 8;
  layout.thread_state.interp = 16;
  layout.thread_state.thread_id = 152;
  layout.thread_state.native_thread_id = 160;
  layout.thread_state.frame_path[0] = 72;  // PyThreadState.current_frame

  layout.frame.model = FrameModel::kInterpreterFrame;
  layout.frame.instruction_kind = InstructionKind::kCurrentInstr;
  layout.frame.code = 0;          // f_executable (PyObject *)
  layout.frame.previous = 8;
  layout.frame.instruction = 56;  // instr_ptr
  layout.frame.owner = 70;
  layout.frame.localsplus = 72;
  layout.frame.owner_by_c_stack = 3;

  layout.code.line_table_kind = LineTableKind::kLocationTable;
  layout.code.first_line = 84;
  layout.code.filename = 128;
  layout.code.name = 136;
  layout.code.qualname = 144;
  layout.code.line_table = 152;     // co_linetable
  layout.code.code_adaptive = 216;  // co_code_adaptive

  layout.bytes.size = 32;  // ob_size
  layout.bytes.data = 48;  // ob_sval, after ob_shash

  layout.string.model = StringModel::kCompactPep393;
  layout.string.length = 32;
  layout.string.state = 48;
  layout.string.kind_shift = 2;
  layout.string.compact_shift = 5;
  layout.string.ascii_shift = 6;
  layout.string.ascii_data = 56;    // sizeof(PyASCIIObject)
  layout.string.compact_data = 72;  // sizeof(PyCompactUnicodeObject)
  layout.gil.interpreter_gil = 16;  // ceval.gil
  layout.gil.enabled = 0;
  layout.gil.last_holder = 16;
  layout.gil.locked = 24;
  // Variables (py-locals, py-print, sys.version).
  layout.variables.frame_globals = 24;
  layout.variables.frame_builtins = 32;
  layout.variables.code_local_names = 112;  // co_localsplusnames
  layout.variables.code_local_count = 96;  // co_nlocals
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
  // Modules/_threadmodule.c after the 32-byte free-threaded header. 3.13.0 to 3.13.3: lockobject
  // { PyObject_HEAD; PyThread_type_lock lock_lock; PyObject *in_weakreflist; char locked; }
  // (basicsize 56); later 3.13 releases (v3.13.15 read here): lockobject { PyObject_HEAD; PyMutex
  // lock; } (basicsize 40). rlockobject { PyObject_HEAD; PyThread_type_lock rlock_lock;
  // PyThread_ident_t rlock_owner; unsigned long rlock_count; PyObject *in_weakreflist; } in both.
  layout.locks.lock[0] = {.basicsize = 56, .model = LockModel::kSemaphorePointer, .lock = 32};
  layout.locks.lock[1] = {.basicsize = 40, .model = LockModel::kPyMutex, .lock = 32};
  layout.locks.rlock[0] = {.basicsize = 64, .model = LockModel::kSemaphorePointer, .lock = 32,
                           .owner = 40, .count = 48};
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
  // pycore_genobject.h): offsetof() probes compiled against v3.13.15's headers configured with
  // --disable-gil (the 32-byte header moves every field 16 bytes); tasks are registered in
  // asyncio.tasks' WeakSets as in the default build; frame states and stacktop as in 3.13.
  layout.asyncio.task_sets[0] = "_scheduled_tasks";
  layout.asyncio.task_sets[1] = "_eager_tasks";
  layout.asyncio.future_state = 112;
  layout.asyncio.task_fut_waiter = 128;
  layout.asyncio.task_coro = 136;
  layout.asyncio.task_name = 144;
  layout.asyncio.coroutine_frame = 88;  // cr_iframe
  layout.asyncio.coroutine_frame_state = 83;
  layout.asyncio.suspended_state_low = -2;
  layout.asyncio.suspended_state_high = -1;
  layout.asyncio.stack_top_model = StackTopModel::kIndexFromLocalsplus;
  layout.asyncio.stack_top = 64;
  layout.asyncio.function_closure = 88;
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
