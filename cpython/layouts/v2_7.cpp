// CPython 2.7 (x86-64, default build, UCS4 or UCS2 alike: no field below depends on it), read
// with `ptype /o` from the DWARF of a 2.7.18 build (Include/pystate.h, frameobject.h, code.h,
// stringobject.h, object.h). These structs did not change over the 2.7 series. Walked live on
// 2.7.18.
//
// What is peculiar to this version, and the fields that say it:
// - There is no _PyRuntime: the first interpreter is the static pointer `interp_head`
//   (Python/pystate.c), so runtime.symbol = "interp_head" and runtime.interpreters_head = 0 (the
//   pointer stored at the symbol itself). It is a local symbol (.symtab only); in a stripped
//   binary runtime.symbol_reader names the exported PyInterpreterState_Head(), whose body
//   `mov interp_head(%rip), %rax; ret` locate_runtime (runtime_locator.cpp) decodes.
// - The GIL is `interpreter_lock`, an opaque PyThread_type_lock: there is no locked/last_holder
//   to read. gil.holder_symbol names the exported `_PyThreadState_Current` (PyThreadState *)
//   instead: non-NULL exactly while a thread holds the GIL (PyEval_SaveThread clears it).
// - PyThreadState has no native_thread_id: the LWP is found by fill_lwps_from_thread_pointers
//   (analyzer.cpp), thread_id (pthread_self()) being the thread pointer each LWP's fs_base holds.
// - PyInterpreterState has no id: interpreter.id is kAbsent and the walker reports 0.
// - str is PyStringObject (type "str", bytes inline): string.model = kBytes, and co_filename,
//   co_name and co_lnotab are all str, so bytes.data = string.bytes_data = 36.
// - co_lnotab line increments are unsigned bytes: code.lnotab_signed = false. Lines come from
//   co_lnotab (code.line_table); f_lineno (124) is kept only while tracing and is not read.
// - The eval loop is PyEval_EvalFrameEx (eval_loop_function); threading.py's `self.__name` is
//   mangled to `_Thread__name` (thread_name_attribute); `int` is a C long, PyIntObject.ob_ival
//   (variables.machine_int_value); dicts are open tables (variables.dict_model = kOpenTable).
// - `unicode` objects (PyUnicodeObject): length at 16, a Py_UNICODE * buffer at 24
//   (string.python2_unicode_*); the unit width is the build's, found by the analyzer.
#include "cpython/layouts/all_layouts.h"

namespace hangpy::cpython::layouts {

extern const Layout kPython27 = [] {
  Layout layout;
  layout.name = "2.7";
  layout.source_tag = "v2.7.18";
  layout.major = 2;
  layout.minor = 7;

  layout.runtime.interpreters_head = 0;  // runtime.symbol (`interp_head`) is the pointer itself
  // No GIL struct to read: gil.holder_symbol (_PyThreadState_Current) says who holds it.

  layout.interpreter.next = 0;
  layout.interpreter.threads_head = 8;  // tstate_head
  // No interpreter id in 2.7.

  layout.thread_state.next = 0;  // no `prev` in 2.7
  layout.thread_state.interp = 8;
  layout.thread_state.thread_id = 144;     // long thread_id
  layout.thread_state.frame_path[0] = 16;  // PyThreadState.frame

  layout.frame.model = FrameModel::kFrameObject;
  layout.frame.instruction_kind = InstructionKind::kLastiBytes;
  layout.frame.code = 32;          // f_code
  layout.frame.previous = 24;      // f_back
  layout.frame.instruction = 120;  // f_lasti
  layout.frame.localsplus = 376;   // f_localsplus

  layout.code.line_table_kind = LineTableKind::kLnotab;
  layout.code.filename = 80;
  layout.code.name = 88;
  layout.code.first_line = 96;
  layout.code.line_table = 104;  // co_lnotab (a str)
  layout.code.lnotab_signed = false;

  layout.bytes.size = 16;  // PyStringObject.ob_size
  layout.bytes.data = 36;  // PyStringObject.ob_sval, after ob_shash and int ob_sstate

  layout.string.model = StringModel::kBytes;
  layout.thread_name_attribute = "_Thread__name";  // threading.py's `self.__name`, mangled
  layout.string.length = 16;      // ob_size
  layout.string.bytes_data = 36;  // ob_sval
  layout.string.python2_unicode_length = 16;
  layout.string.python2_unicode_buffer = 24;
  layout.eval_loop_function = "PyEval_EvalFrameEx";
  layout.runtime.symbol = "interp_head";
  layout.runtime.symbol_reader = "PyInterpreterState_Head";
  // 2.7 keeps no finalizing pointer (its `initialized` flag is one of several statics of that
  // name in libpython), so runtime.finalizing stays absent: whether it shuts down is unknown.
  layout.gil.holder_symbol = "_PyThreadState_Current";
  // Variables (py-locals, py-print, sys.version).
  layout.interpreter.sysdict = 24;
  layout.variables.frame_globals = 48;
  layout.variables.frame_builtins = 40;
  layout.variables.code_local_names = 56;  // co_varnames, then cells, then free variables
  layout.variables.code_cell_names = 72;
  layout.variables.code_free_names = 64;
  layout.variables.machine_int_value = 16;  // PyIntObject.ob_ival (a long)
  layout.variables.dict_model = DictModel::kOpenTable;
  layout.variables.dict_used = 24;
  layout.variables.dict_values = 32;  // ma_mask
  layout.variables.dict_keys = 40;    // ma_table
  // Modules/threadmodule.c lockobject { PyObject_HEAD; PyThread_type_lock lock_lock; PyObject
  // *in_weakreflist; }; threading.RLock is Python code in 2.7 (no C type to read).
  layout.locks.lock_type = "thread.lock";
  layout.locks.rlock_type = "";
  layout.locks.lock[0] = {.basicsize = 32, .model = LockModel::kSemaphorePointer, .lock = 16};
  layout.locks.daemon_attribute = "_Thread__daemonic";
  // Python 2's descriptors have no d_qualname: d_base and d_wrapped come one word earlier.
  layout.callables.wrapper_descriptor_base = 32;
  layout.callables.wrapper_descriptor_wrapped = 40;
  return layout;
}();

}  // namespace hangpy::cpython::layouts
