// CPython 3.6 (x86-64, default build), read with `ptype /o` from the DWARF of a 3.6.15 build;
// the v3.6.0..v3.6.15 header diffs (Include/pystate.h, frameobject.h, code.h) touch none of
// these fields (3.6.x only renamed PyThreadState's co_extra members, after thread_id). Walked live
// on 3.6.15.
//
// NEEDS (facts this table cannot express yet):
// - There is no _PyRuntime. The first interpreter is the static pointer variable `interp_head`
//   (Python/pystate.c): read the pointer stored at that symbol. It is a local symbol (.symtab
//   only, not .dynsym); without it, the exported PyInterpreterState_Head() is
//   `mov interp_head(%rip), %rax; ret` (decode the RIP-relative address), or take
//   ((PyThreadState *)_PyThreadState_Current)->interp. interpreters_head = 0 below means
//   "offset 0 from the `interp_head` symbol".
// - The GIL is two static variables in Python/ceval_gil.h, not a struct: `gil_locked`
//   (_Py_atomic_int: int at +0; -1 until PyEval_InitThreads() created the GIL, which 3.6 does
//   lazily when the first thread starts) and `gil_last_holder` (_Py_atomic_address: pointer at
//   +0). Both local symbols. The exported `_PyThreadState_Current` (_Py_atomic_address) is the
//   thread state running Python now (NULL while every thread has released the GIL).
// - PyThreadState has no native_thread_id; PyInterpreterState has no id (treat as 0).
// - f_lineno (124) is only maintained while tracing; use co_lnotab otherwise.
#include "cpython/layouts/all_layouts.h"

namespace hangpy::cpython::layouts {

extern const Layout kPython36 = [] {
  Layout layout;
  layout.name = "3.6";
  layout.source_tag = "v3.6.15";
  layout.major = 3;
  layout.minor = 6;

  layout.runtime.interpreters_head = 0;  // the runtime symbol is `interp_head` itself: see NEEDS
  // gil_locked / gil_last_holder are separate static variables: see NEEDS.

  layout.interpreter.next = 0;
  layout.interpreter.threads_head = 8;  // tstate_head
  // No interpreter id before 3.7.

  layout.thread_state.next = 8;  // after `prev`
  layout.thread_state.interp = 16;
  layout.thread_state.thread_id = 152;     // long thread_id
  layout.thread_state.frame_path[0] = 24;  // PyThreadState.frame

  layout.frame.model = FrameModel::kFrameObject;
  layout.frame.instruction_kind = InstructionKind::kLastiBytes;
  layout.frame.code = 32;          // f_code
  layout.frame.previous = 24;      // f_back
  layout.frame.instruction = 120;  // f_lasti
  layout.frame.localsplus = 376;   // f_localsplus

  layout.code.line_table_kind = LineTableKind::kLnotab;
  layout.code.first_line = 36;
  layout.code.filename = 96;
  layout.code.name = 104;
  layout.code.line_table = 112;  // co_lnotab
  layout.code.lnotab_signed = true;  // signed line increments are new in 3.6

  layout.string.model = StringModel::kCompactPep393;
  layout.string.ascii_data = 48;    // sizeof(PyASCIIObject), with wstr
  layout.string.compact_data = 72;  // sizeof(PyCompactUnicodeObject)
  layout.runtime.symbol = "interp_head";
  layout.runtime.symbol_reader = "PyInterpreterState_Head";
  layout.gil.holder_symbol = "_PyThreadState_Current";
  // Variables (py-locals, py-print, sys.version).
  layout.interpreter.sysdict = 32;
  layout.variables.frame_globals = 48;
  layout.variables.frame_builtins = 40;
  layout.variables.code_local_names = 64;  // co_varnames, then cells, then free variables
  layout.variables.code_cell_names = 80;
  layout.variables.code_free_names = 72;
  layout.variables.dict_model = DictModel::kKeysSize;
  layout.variables.keys_size = 8;          // dk_size
  layout.variables.keys_entry_count = 32;  // dk_nentries
  layout.variables.keys_indices = 40;
  return layout;
}();

}  // namespace hangpy::cpython::layouts
