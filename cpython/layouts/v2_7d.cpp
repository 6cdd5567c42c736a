// CPython 2.7 built with Py_TRACE_REFS (--with-pydebug implies it up to 3.7: Debian's
// python2.7-dbg, pyenv's 2.7 with --with-pydebug). Every object starts with two more pointers,
// _ob_next and _ob_prev (the list of all live objects, sys.getobjects), before ob_refcnt, so every
// field of an object (frames, code objects, strings, dicts, types, locks) is 16 bytes later than
// in the 2.7 table; the interpreter and thread states are no objects and do not move. Checked
// against Debian 11's python2.7-dbg (2.7.18) live and from cores (integration.bullseye-2.7d,
// corpus bullseye-2.7d). Chosen over the 2.7 table where the process has
// _Py_PrintReferenceAddresses, which only a Py_TRACE_REFS build defines.
#include "cpython/layouts/all_layouts.h"

namespace hangpy::cpython::layouts {

extern const Layout kPython27TraceRefs = [] {
  Layout layout;
  layout.name = "2.7d";
  layout.source_tag = "v2.7.18";
  layout.major = 2;
  layout.minor = 7;
  layout.trace_refs = true;

  constexpr int32_t kHeader = 16;  // _ob_next, _ob_prev
  layout.object.ob_refcnt = kHeader;
  layout.object.ob_type = 8 + kHeader;
  layout.object.ob_size = 16 + kHeader;
  layout.object.tp_name = 24 + kHeader;

  layout.runtime.interpreters_head = 0;  // runtime.symbol (`interp_head`) is the pointer itself

  layout.interpreter.next = 0;
  layout.interpreter.threads_head = 8;  // tstate_head

  layout.thread_state.next = 0;
  layout.thread_state.interp = 8;
  layout.thread_state.thread_id = 144;     // long thread_id
  layout.thread_state.frame_path[0] = 16;  // PyThreadState.frame

  layout.frame.model = FrameModel::kFrameObject;
  layout.frame.instruction_kind = InstructionKind::kLastiBytes;
  layout.frame.code = 32 + kHeader;          // f_code
  layout.frame.previous = 24 + kHeader;      // f_back
  layout.frame.instruction = 120 + kHeader;  // f_lasti
  layout.frame.localsplus = 376 + kHeader;   // f_localsplus

  layout.code.line_table_kind = LineTableKind::kLnotab;
  layout.code.filename = 80 + kHeader;
  layout.code.name = 88 + kHeader;
  layout.code.first_line = 96 + kHeader;
  layout.code.line_table = 104 + kHeader;  // co_lnotab (a str)
  layout.code.lnotab_signed = false;

  layout.bytes.size = 16 + kHeader;  // PyStringObject.ob_size
  layout.bytes.data = 36 + kHeader;  // PyStringObject.ob_sval

  layout.string.model = StringModel::kBytes;
  layout.thread_name_attribute = "_Thread__name";
  layout.string.length = 16 + kHeader;
  layout.string.bytes_data = 36 + kHeader;
  layout.string.python2_unicode_length = 16 + kHeader;
  layout.string.python2_unicode_buffer = 24 + kHeader;
  layout.eval_loop_function = "PyEval_EvalFrameEx";
  layout.runtime.symbol = "interp_head";
  layout.runtime.symbol_reader = "PyInterpreterState_Head";
  layout.gil.holder_symbol = "_PyThreadState_Current";
  layout.interpreter.sysdict = 24;
  layout.variables.frame_globals = 48 + kHeader;
  layout.variables.frame_builtins = 40 + kHeader;
  layout.variables.code_local_names = 56 + kHeader;
  layout.variables.code_cell_names = 72 + kHeader;
  layout.variables.code_free_names = 64 + kHeader;
  layout.variables.machine_int_value = 16 + kHeader;  // PyIntObject.ob_ival
  layout.variables.dict_model = DictModel::kOpenTable;
  layout.variables.dict_used = 24 + kHeader;
  layout.variables.dict_values = 32 + kHeader;  // ma_mask
  layout.variables.dict_keys = 40 + kHeader;    // ma_table
  layout.variables.tuple_items += kHeader;
  layout.variables.list_items += kHeader;
  layout.variables.cell_reference += kHeader;
  layout.variables.float_value += kHeader;
  layout.variables.module_dict += kHeader;
  layout.variables.int_size += kHeader;
  layout.variables.int_digits += kHeader;
  layout.instances.type_basicsize += kHeader;
  layout.instances.type_flags += kHeader;
  layout.instances.type_dictoffset += kHeader;
  layout.instances.type_base += kHeader;
  layout.instances.type_call += kHeader;
  layout.instances.type_members += kHeader;
  layout.locks.lock_type = "thread.lock";
  layout.locks.rlock_type = "";
  layout.locks.lock[0] = {.basicsize = 32 + kHeader, .model = LockModel::kSemaphorePointer,
                          .lock = 16 + kHeader};
  layout.locks.daemon_attribute = "_Thread__daemonic";
  layout.callables.wrapper_descriptor_base = 32 + kHeader;
  layout.callables.wrapper_descriptor_wrapped = 40 + kHeader;
  for (int32_t* field : {&layout.callables.cfunction_method_def, &layout.callables.cfunction_self,
                         &layout.callables.method_wrapper_descriptor,
                         &layout.callables.method_wrapper_self, &layout.callables.exception_args})
    *field += kHeader;
  return layout;
}();

}  // namespace hangpy::cpython::layouts
