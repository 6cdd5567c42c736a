// A layout table: where the walker finds what it needs in one CPython version's structs, as data.
// One table per version and ABI variant (cpython/layouts/), written from that version's headers.
// The walker asks these fields, never the version number; a field that a version lacks is
// kAbsent, and the capability enums below say which model of frame, line table or string applies.
#pragma once

#include <cstdint>
#include <string_view>

namespace hangpy::cpython {

inline constexpr int32_t kAbsent = -1;

// Which struct is the unit of the frame chain.
enum class FrameModel : uint8_t {
  kFrameObject,       // PyFrameObject linked by f_back (up to 3.10)
  kInterpreterFrame,  // _PyInterpreterFrame linked by `previous` (3.11 on)
};

// How a frame records where it is in its code object's bytecode.
enum class InstructionKind : uint8_t {
  kLastiBytes,      // int f_lasti: byte offset of the last instruction started (up to 3.9)
  kLastiCodeUnits,  // int f_lasti: the same in 2-byte code units (3.10)
  kPrevInstr,       // _Py_CODEUNIT *prev_instr: the last instruction started (3.11, 3.12)
  kCurrentInstr,    // _Py_CODEUNIT *instr_ptr: the instruction being executed (3.13 on)
};

// How a code object maps bytecode offsets to line numbers.
enum class LineTableKind : uint8_t {
  kLnotab,         // co_lnotab: (byte increment, line increment) pairs (up to 3.9)
  kLineTable310,   // co_linetable: (byte delta, signed line delta) pairs (3.10)
  kLocationTable,  // co_linetable: PEP 657 location entries (3.11 on)
};

// How str objects hold their characters.
enum class StringModel : uint8_t {
  kBytes,       // Python 2 str: PyStringObject, bytes inline
  kCompactPep393,  // PEP 393 compact unicode: kind/compact/ascii bits in `state`
};

struct ObjectLayout {
  int32_t ob_type = 8;        // PyObject.ob_type
  int32_t ob_size = 16;       // PyVarObject.ob_size
  int32_t tp_name = 24;       // PyTypeObject.tp_name (const char *)
};

struct RuntimeLayout {
  int32_t interpreters_head = kAbsent;  // _PyRuntimeState.interpreters.head
  int32_t gil_locked = kAbsent;         // the GIL's `locked` flag (int)
  int32_t gil_last_holder = kAbsent;    // the GIL's last holder (PyThreadState *)
};

struct InterpreterLayout {
  int32_t next = kAbsent;          // PyInterpreterState.next
  int32_t threads_head = kAbsent;  // PyInterpreterState.threads.head (or tstate_head)
  int32_t id = kAbsent;            // int64_t id
};

struct ThreadStateLayout {
  int32_t next = kAbsent;
  int32_t interp = kAbsent;
  int32_t thread_id = kAbsent;         // unsigned long: pthread_t, threading.get_ident()
  int32_t native_thread_id = kAbsent;  // unsigned long: the LWP (3.8 on)
  // The innermost frame is reached by following these pointers from the thread state in order:
  // {frame} up to 3.10, {cframe, current_frame} in 3.11 and 3.12, {current_frame} from 3.13.
  int32_t frame_path[2] = {kAbsent, kAbsent};
};

struct FrameLayout {
  FrameModel model = FrameModel::kInterpreterFrame;
  InstructionKind instruction_kind = InstructionKind::kPrevInstr;
  int32_t code = kAbsent;         // f_code / f_executable
  int32_t previous = kAbsent;     // f_back / previous
  int32_t instruction = kAbsent;  // f_lasti / prev_instr / instr_ptr
  int32_t line_number = kAbsent;  // f_lineno, used when the frame is being traced (up to 3.10)
  int32_t owner = kAbsent;        // char owner (3.11 on)
  int32_t is_entry = kAbsent;     // bool is_entry (3.11 only; 3.12 uses an owner value instead)
  int32_t localsplus = kAbsent;   // first slot of locals + cells + stack
  // Values of `owner`; kAbsent where a version has no such owner.
  int32_t owner_by_thread = kAbsent;
  int32_t owner_by_generator = kAbsent;
  int32_t owner_by_frame_object = kAbsent;
  int32_t owner_by_c_stack = kAbsent;  // shim frames the eval loop pushes (3.12 on): skipped
  int32_t owner_by_interpreter = kAbsent;
};

struct CodeLayout {
  LineTableKind line_table_kind = LineTableKind::kLocationTable;
  int32_t filename = kAbsent;
  int32_t name = kAbsent;
  int32_t qualname = kAbsent;        // 3.11 on; earlier versions have co_name only
  int32_t first_line = kAbsent;      // int co_firstlineno
  int32_t line_table = kAbsent;      // bytes: co_lnotab / co_linetable
  int32_t code_bytes = kAbsent;      // bytes object co_code (up to 3.10)
  int32_t code_adaptive = kAbsent;   // bytecode stored inline in the code object (3.11 on)
  bool lnotab_signed = true;         // co_lnotab line increments are signed from 3.6 on
};

struct BytesLayout {
  int32_t size = 16;  // ob_size
  int32_t data = 32;  // ob_sval
};

struct StringLayout {
  StringModel model = StringModel::kCompactPep393;
  int32_t length = 16;             // number of code points (or bytes, for kBytes)
  int32_t state = 32;              // the bitfield word holding kind, compact, ascii
  uint8_t kind_shift = 2;          // `kind` is 3 bits wide
  uint8_t compact_shift = 5;
  uint8_t ascii_shift = 6;
  int32_t ascii_data = 48;         // sizeof(PyASCIIObject): compact ASCII data follows it
  int32_t compact_data = 72;       // sizeof(PyCompactUnicodeObject): other compact data follows
  int32_t bytes_data = 36;         // Python 2 str: ob_sval
};

struct Layout {
  std::string_view name;        // "3.11", "3.13t"
  std::string_view source_tag;  // the CPython tag whose headers this table was read from
  int major = 0;
  int minor = 0;
  bool free_threaded = false;
  ObjectLayout object;
  RuntimeLayout runtime;
  InterpreterLayout interpreter;
  ThreadStateLayout thread_state;
  FrameLayout frame;
  CodeLayout code;
  BytesLayout bytes;
  StringLayout string;
};

}  // namespace hangpy::cpython
