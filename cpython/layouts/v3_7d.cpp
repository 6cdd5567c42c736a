// CPython 3.7 built with --with-pydebug, which up to 3.7 implies Py_TRACE_REFS: every object
// starts with _ob_next and _ob_prev (the list of all live objects, sys.getobjects) before
// ob_refcnt, so every field of an object (frames, code objects, strings, dicts, types, locks,
// futures) is 16 bytes later than in the 3.7 table; the runtime, interpreter and thread states are
// no objects and do not move. Checked against a v3.7.17 --with-pydebug build live and from cores
// (integration.local-3.7d, corpus local-3.7d). Chosen over the 3.7 table where the process has
// _Py_PrintReferenceAddresses, which only a Py_TRACE_REFS build defines.
#include "cpython/layouts/all_layouts.h"

namespace hangpy::cpython::layouts {

extern const Layout kPython37TraceRefs = [] {
  Layout layout;
  layout.name = "3.7d";
  layout.source_tag = "v3.7.17";
  layout.major = 3;
  layout.minor = 7;
  layout.trace_refs = true;

  constexpr int32_t kHeader = 16;  // _ob_next, _ob_prev
  layout.object.ob_refcnt += kHeader;
  layout.object.ob_type += kHeader;
  layout.object.ob_size += kHeader;
  layout.object.tp_name += kHeader;

  layout.runtime.interpreters_head = 24;
  layout.runtime.finalizing = 8;
  layout.gil.last_holder = 1272;
  layout.gil.locked = 1280;

  layout.interpreter.next = 0;
  layout.interpreter.threads_head = 8;
  layout.interpreter.id = 16;

  layout.thread_state.next = 8;
  layout.thread_state.interp = 16;
  layout.thread_state.thread_id = 176;
  layout.thread_state.frame_path[0] = 24;

  layout.frame.model = FrameModel::kFrameObject;
  layout.frame.instruction_kind = InstructionKind::kLastiBytes;
  layout.frame.code = 32 + kHeader;
  layout.frame.previous = 24 + kHeader;
  layout.frame.instruction = 104 + kHeader;
  layout.frame.localsplus = 360 + kHeader;

  layout.code.line_table_kind = LineTableKind::kLnotab;
  layout.code.first_line = 36 + kHeader;
  layout.code.filename = 96 + kHeader;
  layout.code.name = 104 + kHeader;
  layout.code.line_table = 112 + kHeader;

  layout.bytes.size += kHeader;
  layout.bytes.data += kHeader;
  layout.string.model = StringModel::kCompactPep393;
  layout.string.length += kHeader;
  layout.string.state += kHeader;
  layout.string.ascii_data = 48 + kHeader;
  layout.string.compact_data = 72 + kHeader;
  layout.interpreter.sysdict = 56;
  layout.variables.frame_globals = 48 + kHeader;
  layout.variables.frame_builtins = 40 + kHeader;
  layout.variables.code_local_names = 64 + kHeader;
  layout.variables.code_cell_names = 80 + kHeader;
  layout.variables.code_free_names = 72 + kHeader;
  layout.variables.dict_model = DictModel::kKeysSize;
  layout.variables.keys_size = 8;  // PyDictKeysObject is no object: its fields stay
  layout.variables.keys_entry_count = 32;
  layout.variables.keys_indices = 40;
  for (int32_t* field : {&layout.variables.tuple_items, &layout.variables.list_items,
                         &layout.variables.cell_reference, &layout.variables.float_value,
                         &layout.variables.module_dict, &layout.variables.int_size,
                         &layout.variables.int_digits, &layout.variables.dict_used,
                         &layout.variables.dict_keys, &layout.variables.dict_values,
                         &layout.instances.type_basicsize, &layout.instances.type_flags,
                         &layout.instances.type_dictoffset, &layout.instances.type_base,
                         &layout.instances.type_call,
                         &layout.instances.type_members, &layout.callables.cfunction_method_def,
                         &layout.callables.cfunction_self, &layout.callables.method_wrapper_descriptor,
                         &layout.callables.method_wrapper_self,
                         &layout.callables.wrapper_descriptor_base,
                         &layout.callables.wrapper_descriptor_wrapped,
                         &layout.callables.exception_args, &layout.asyncio.future_loop,
                         &layout.asyncio.future_callback0, &layout.asyncio.future_callbacks,
                         &layout.asyncio.future_iter_future, &layout.asyncio.set_mask,
                         &layout.asyncio.set_table, &layout.asyncio.weakref_object,
                         &layout.asyncio.method_self, &layout.asyncio.method_function})
    *field += kHeader;
  layout.gil.wait_begin = 1296;
  layout.gil.wait_end = 1472;
  layout.locks.lock[0] = {.basicsize = 40 + kHeader, .model = LockModel::kSemaphorePointer,
                          .lock = 16 + kHeader};
  layout.locks.rlock[0] = {.basicsize = 48 + kHeader, .model = LockModel::kSemaphorePointer,
                           .lock = 16 + kHeader, .owner = 24 + kHeader, .count = 32 + kHeader};
  layout.gc.in_runtime = true;
  layout.gc.state = 320;
  layout.gc.collecting = 312;
  layout.asyncio.task_sets[0] = "_all_tasks";
  layout.asyncio.task_sets[1] = "";
  layout.asyncio.future_state = 72 + kHeader;
  layout.asyncio.task_fut_waiter = 104 + kHeader;
  layout.asyncio.task_coro = 112 + kHeader;
  layout.asyncio.coroutine_frame_pointer = 16 + kHeader;
  layout.asyncio.coroutine_qualname = 56 + kHeader;
  layout.asyncio.stack_top_model = StackTopModel::kPointerPastTop;
  layout.asyncio.stack_top = 72 + kHeader;  // PyFrameObject.f_stacktop
  layout.asyncio.function_closure = 48 + kHeader;
  return layout;
}();

}  // namespace hangpy::cpython::layouts
