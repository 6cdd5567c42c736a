// CPython 3.11 (x86-64, default build), read from the v3.11.7 headers: Include/internal/
// pycore_runtime.h, pycore_interp.h, pycore_frame.h, Include/cpython/pystate.h, code.h,
// unicodeobject.h. The 3.11 series kept these offsets stable (checked on 3.11.2 and 3.11.7).
#include "cpython/layouts/all_layouts.h"

namespace hangpy::cpython::layouts {

extern const Layout kPython311 = [] {
  Layout layout;
  layout.name = "3.11";
  layout.source_tag = "v3.11.7";
  layout.major = 3;
  layout.minor = 11;

  layout.runtime.interpreters_head = 40;  // interpreters { mutex; head; main; next_id }
  layout.runtime.finalizing = 24;  // _Py_atomic_address _finalizing, after 5 ints and padding
  layout.gil.last_holder = 368;   // ceval.gil.last_holder
  layout.gil.locked = 376;        // ceval.gil.locked

  layout.interpreter.next = 0;
  layout.interpreter.threads_head = 16;
  layout.interpreter.id = 48;

  layout.thread_state.next = 8;
  layout.thread_state.interp = 16;
  layout.thread_state.thread_id = 152;
  layout.thread_state.native_thread_id = 160;
  layout.thread_state.frame_path[0] = 56;  // PyThreadState.cframe
  layout.thread_state.frame_path[1] = 8;   // _PyCFrame.current_frame

  layout.frame.model = FrameModel::kInterpreterFrame;
  layout.frame.instruction_kind = InstructionKind::kPrevInstr;
  layout.frame.code = 32;         // f_code
  layout.frame.previous = 48;
  layout.frame.instruction = 56;  // prev_instr
  layout.frame.is_entry = 68;
  layout.frame.owner = 69;
  layout.frame.localsplus = 72;

  layout.code.line_table_kind = LineTableKind::kLocationTable;
  layout.code.first_line = 72;
  layout.code.filename = 112;
  layout.code.name = 120;
  layout.code.qualname = 128;
  layout.code.line_table = 136;
  layout.code.code_adaptive = 184;

  layout.string.model = StringModel::kCompactPep393;
  layout.string.ascii_data = 48;    // sizeof(PyASCIIObject), which still has wstr in 3.11
  layout.string.compact_data = 72;  // sizeof(PyCompactUnicodeObject)
  auto& v = layout.variables;
  v.frame_globals = 8;
  v.frame_builtins = 16;
  v.code_local_names = 96;  // co_localsplusnames
  v.code_local_count = 80;  // co_nlocals
  v.int_model = IntModel::kSignedSize;
  v.dict_model = DictModel::kKeysLog2;
  v.dict_used = 16;
  v.dict_keys = 32;
  v.dict_values = 40;
  v.dict_values_array = 0;  // PyDictValues is just the array
  v.keys_size = 8;          // dk_log2_size
  v.keys_log2_index_bytes = 9;
  v.keys_kind = 10;
  v.keys_entry_count = 24;
  v.keys_indices = 32;
  layout.interpreter.sysdict = 904;
  layout.instances.model = InstanceDictModel::kManagedDictValues;
  layout.instances.heap_type_cached_keys = 872;
  // _gil_runtime_state after `locked`: switch_number, then cond (48 bytes), mutex (40),
  // switch_cond (48), switch_mutex (40), which GIL waiters sleep on.
  layout.gil.wait_begin = 392;
  layout.gil.wait_end = 568;
  // Modules/_threadmodule.c lockobject { PyObject_HEAD; PyThread_type_lock lock_lock; PyObject
  // *in_weakreflist; char locked; } and rlockobject { PyObject_HEAD; PyThread_type_lock rlock_lock;
  // unsigned long rlock_owner; unsigned long rlock_count; PyObject *in_weakreflist; }
  layout.locks.lock[0] = {.basicsize = 40, .model = LockModel::kSemaphorePointer, .lock = 16};
  layout.locks.rlock[0] = {.basicsize = 48, .model = LockModel::kSemaphorePointer, .lock = 16,
                           .owner = 24, .count = 32};
  // PyInterpreterState.gc.collecting (Include/internal/pycore_gc.h struct _gc_runtime_state), read with
  // `print &((...)0)->gc.collecting` from the DWARF of pyenv's 3.11 build.
  layout.gc.in_runtime = false;
  layout.gc.state = 648;
  layout.gc.collecting = 200;
  // asyncio (Modules/_asynciomodule.c FutureObj_HEAD / TaskObj): Coroutines embed their
  // _PyInterpreterFrame (cr_iframe at 80, after cr_code, cr_weakreflist, cr_name, cr_qualname,
  // cr_exc_state, cr_origin_or_finalizer and four chars, the last int8 cr_frame_state at 75:
  // FRAME_SUSPENDED -1); the frame's int stacktop (64) counts slots from localsplus.
  // Offsets checked against live objects of pyenv/Debian builds (word scans with ctypes).
  layout.asyncio.task_sets[0] = "_all_tasks";
  layout.asyncio.task_sets[1] = "";
  layout.asyncio.future_state = 88;
  layout.asyncio.task_fut_waiter = 128;
  layout.asyncio.task_coro = 136;
  layout.asyncio.task_name = 144;
  layout.asyncio.coroutine_frame = 80;  // cr_iframe
  layout.asyncio.coroutine_frame_state = 75;
  layout.asyncio.suspended_state_low = -1;
  layout.asyncio.suspended_state_high = -1;
  layout.asyncio.stack_top_model = StackTopModel::kIndexFromLocalsplus;
  layout.asyncio.stack_top = 64;
  layout.asyncio.function_closure = 72;
  return layout;
}();

}  // namespace hangpy::cpython::layouts
