// CPython 3.15t (x86-64, free-threaded build: ./configure --disable-gil). The offsets are
// offsetof() probes compiled against the headers of a v3.15.0rc1 free-threaded build (its own
// pyconfig.h: Py_GIL_DISABLED), checked against the _Py_DebugOffsets that build's processes carry
// (tests/unit and integration.layout-check where local-3.15t is installed) and against their
// ground truth (stacks, thread names, locals, locks, asyncio tasks).
//
// What is peculiar to this version, and the fields that say it:
// - Everything of the default 3.15 table (cpython/layouts/v3_15.cpp): no FRAME_OWNED_BY_CSTACK,
//   _Py_DebugOffsets of 888 bytes at _PyRuntime + 0, renumbered frame states, thread_id at 176.
// - Everything of a free-threaded build (as cpython/layouts/v3_14t.cpp): a 32-byte object header
//   (ob_tid, ob_flags, ob_mutex, ob_gc_bits, ob_ref_local, ob_ref_shared, then ob_type at 24), so
//   every object field moves by 16; per-thread bytecode (co_tlbc at 224, the frame's tlbc_index
//   at 72, so owner is at 78); `interned` is a whole byte of the str state (kind at bit 8); the
//   GIL struct starts with `enabled`.
// - The type object's ht_cached_keys moved to 904 (896 in 3.14t): the 3.14t table, which 3.15t
//   borrowed before, read no instance attribute, so no thread names either.
#include "cpython/layouts/all_layouts.h"

namespace hangpy::cpython::layouts {

extern const Layout kPython315t = [] {
  Layout layout;
  layout.name = "3.15t";
  layout.source_tag = "v3.15.0rc1";
  layout.major = 3;
  layout.minor = 15;
  layout.free_threaded = true;

  layout.object.ob_refcnt = kAbsent;  // ob_ref_local and ob_ref_shared
  layout.object.ob_type = 24;  // after ob_tid, ob_flags, ob_mutex, ob_gc_bits, ob_ref_local,
                               // ob_ref_shared
  layout.object.ob_size = 32;
  layout.object.tp_name = 40;

  layout.runtime.interpreters_head = 936;  // after the 888-byte _Py_DebugOffsets
  layout.runtime.starts_with_debug_offsets = true;
  layout.runtime.finalizing = 912;  // PyThreadState *_finalizing; _finalizing_id; then interpreters
  // The GIL is per interpreter (and usually disabled): see gil.interpreter_gil below.

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
  layout.frame.instruction = 56;  // instr_ptr, into the thread's bytecode (tlbc_index)
  layout.frame.owner = 78;        // after stackpointer (64), tlbc_index (72), return_offset (76)
  layout.frame.localsplus = 80;
  layout.frame.owner_by_interpreter = 3;
  // FRAME_OWNED_BY_CSTACK is gone from 3.15's enum: owner_by_c_stack stays kAbsent.

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
  layout.variables.tuple_items = 32;  // ob_item follows the cached Py_hash_t ob_hash (+16 below)
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
  layout.instances.heap_type_cached_keys = 904;  // 896 in 3.14t
  // _gil_runtime_state after `locked` (at 24 here): switch_number, then cond (48 bytes), mutex
  // (40), switch_cond (48), switch_mutex (40), which GIL waiters sleep on.
  layout.gil.wait_begin = 40;
  layout.gil.wait_end = 216;
  // Modules/_threadmodule.c lockobject { PyObject_HEAD; PyMutex lock; } and rlockobject
  // { PyObject_HEAD; _PyRecursiveMutex lock; } with _PyRecursiveMutex { PyMutex mutex;
  // PyThread_ident_t thread; size_t level; }, after the 32-byte free-threaded header.
  layout.locks.lock[0] = {.basicsize = 40, .model = LockModel::kPyMutex, .lock = 32};
  layout.locks.rlock[0] = {.basicsize = 56, .model = LockModel::kPyMutex, .lock = 32, .owner = 40,
                           .count = 48, .count_bias = 1};
  // Python/parking_lot.c: struct wait_entry { void *park_arg; uintptr_t addr; _PySemaphore sema;
  // ... }, the semaphore a sem_t whose first word is the futex word.
  layout.locks.parked_address = -8;
  // asyncio: _asyncio is built into this build's executable; its .AsyncioDebug section says task
  // size 192, task_name 152, task_coro 144, task_node 168, the interpreter's tasks head at 17632,
  // the thread state's running task at 1032 and tasks head at 1048 (the process's own section is
  // read and preferred at run time). FutureObj_HEAD's fields are the default build's plus the
  // header's 16 bytes; the generator's gi_iframe (88), gi_frame_state (83) and func_closure (88)
  // are offsetof() probes of this build's headers.
  layout.asyncio.task_sets[0] = "_scheduled_tasks";
  layout.asyncio.task_sets[1] = "_eager_tasks";
  layout.asyncio.future_state = 120;
  layout.asyncio.task_fut_waiter = 136;
  layout.asyncio.task_coro = 144;
  layout.asyncio.task_name = 152;
  layout.asyncio.coroutine_frame = 88;  // cr_iframe
  layout.asyncio.coroutine_frame_state = 83;
  layout.asyncio.suspended_state_low = 1;
  layout.asyncio.suspended_state_high = 3;
  layout.asyncio.stack_top_model = StackTopModel::kPointerPastTop;
  layout.asyncio.stack_top = 64;
  layout.asyncio.function_closure = 88;
  layout.asyncio.thread_tasks_head = 1048;
  layout.asyncio.interpreter_tasks_head = 17632;
  layout.asyncio.thread_running_task = 1032;
  layout.asyncio.task_node = 168;
  // The object fields asyncio's reader follows whose defaults are the 16-byte header's: FutureObj's
  // loop and callbacks, FutureIter's future, PySetObject's mask and table (48, 56 by the probe),
  // the weakref's object (32), the bound method's function and self (32, 40).
  for (int32_t* field : {&layout.asyncio.future_loop, &layout.asyncio.future_callback0,
                         &layout.asyncio.future_callbacks, &layout.asyncio.future_iter_future,
                         &layout.asyncio.set_mask, &layout.asyncio.set_table,
                         &layout.asyncio.weakref_object, &layout.asyncio.method_self,
                         &layout.asyncio.method_function})
    *field += 16;
  // Built-in callables and exceptions: object fields, moved by the bigger header.
  for (int32_t* field : {&layout.callables.cfunction_method_def, &layout.callables.cfunction_self,
                         &layout.callables.method_wrapper_descriptor,
                         &layout.callables.method_wrapper_self,
                         &layout.callables.wrapper_descriptor_base,
                         &layout.callables.wrapper_descriptor_wrapped,
                         &layout.callables.exception_args})
    *field += 16;
  return layout;
}();

}  // namespace hangpy::cpython::layouts
