// CPython 3.6 (x86-64, default build), read with `ptype /o` from the DWARF of a 3.6.15 build;
// the v3.6.0..v3.6.15 header diffs (Include/pystate.h, frameobject.h, code.h) touch none of
// these fields (3.6.x only renamed PyThreadState's co_extra members, after thread_id). Walked live
// on 3.6.15.
//
// What is peculiar to this version, and the fields that say it:
// - There is no _PyRuntime: the first interpreter is the static pointer `interp_head`
//   (Python/pystate.c), so runtime.symbol = "interp_head" and runtime.interpreters_head = 0 (the
//   pointer stored at the symbol itself). It is a local symbol (.symtab only, not .dynsym); in a
//   stripped binary runtime.symbol_reader names the exported PyInterpreterState_Head(), whose body
//   `mov interp_head(%rip), %rax; ret` locate_runtime (runtime_locator.cpp) decodes.
// - The GIL is no struct: gil.holder_symbol names the exported `_PyThreadState_Current`
//   (_Py_atomic_address, a pointer at +0), the thread state running Python now, NULL while every
//   thread has released the GIL.
// - PyThreadState has no native_thread_id: the LWP is found by fill_lwps_from_thread_pointers
//   (analyzer.cpp), thread_id (pthread_self()) being the thread pointer each LWP's fs_base holds.
// - PyInterpreterState has no id: interpreter.id is kAbsent and the walker reports 0.
// - co_lnotab line increments are signed from 3.6 on (code.lnotab_signed = true). Lines come
//   from co_lnotab (code.line_table); f_lineno (124) is kept only while tracing and is not read.
// Not used by hangpy: the static `gil_locked` (_Py_atomic_int at +0; -1 until
// PyEval_InitThreads() creates the GIL, lazily when the first thread starts) and
// `gil_last_holder` of Python/ceval_gil.h: both are local symbols, and _PyThreadState_Current
// names the holder without them.
#include "cpython/layouts/all_layouts.h"

namespace hangpy::cpython::layouts {

extern const Layout kPython36 = [] {
  Layout layout;
  layout.name = "3.6";
  layout.source_tag = "v3.6.15";
  layout.major = 3;
  layout.minor = 6;

  layout.runtime.interpreters_head = 0;  // runtime.symbol (`interp_head`) is the pointer itself
  // No GIL struct to read: gil.holder_symbol (_PyThreadState_Current) says who holds it.

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
  layout.runtime.finalizing_symbol = "_Py_Finalizing";  // Python/pylifecycle.c, exported
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
  // Modules/_threadmodule.c lockobject { PyObject_HEAD; PyThread_type_lock lock_lock; PyObject
  // *in_weakreflist; char locked; } and rlockobject { PyObject_HEAD; PyThread_type_lock rlock_lock;
  // unsigned long rlock_owner; unsigned long rlock_count; PyObject *in_weakreflist; }
  layout.locks.lock[0] = {.basicsize = 40, .model = LockModel::kSemaphorePointer, .lock = 16};
  layout.locks.rlock[0] = {.basicsize = 48, .model = LockModel::kSemaphorePointer, .lock = 16,
                           .owner = 24, .count = 32};
  return layout;
}();

}  // namespace hangpy::cpython::layouts
