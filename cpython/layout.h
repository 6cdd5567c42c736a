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

// How dict objects store their entries.
enum class DictModel : uint8_t {
  kOpenTable,     // Python 2.7: ma_table of (hash, key, value) with ma_mask
  kKeysSize,      // 3.6 to 3.10: a keys object with dk_size and an index array
  kKeysLog2,      // 3.11 on: a keys object with dk_log2_size, dk_kind and unicode-only entries
};

// How int objects store their value.
enum class IntModel : uint8_t {
  kSignedSize,  // ob_size holds the sign and the digit count (up to 3.11)
  kLvTag,       // lv_tag: digit count << 3 | sign bits (3.12 on)
};

struct ObjectLayout {
  // PyObject.ob_refcnt; kAbsent in free-threaded builds, which split the count between the
  // owning thread's and a shared one.
  int32_t ob_refcnt = 0;
  int32_t ob_type = 8;        // PyObject.ob_type
  int32_t ob_size = 16;       // PyVarObject.ob_size
  int32_t tp_name = 24;       // PyTypeObject.tp_name (const char *)
};

struct RuntimeLayout {
  // The symbol the interpreter list hangs off: _PyRuntime (3.7 on), or the static pointer
  // `interp_head` of Python/pystate.c (2.7, 3.6; .symtab only).
  std::string_view symbol = "_PyRuntime";
  int32_t interpreters_head = kAbsent;  // offset of the first interpreter's pointer there
  // An exported function whose body is `mov symbol(%rip), %rax; ret`: where `symbol` is local
  // (.symtab only) and the binary is stripped, decoding it finds the symbol all the same.
  std::string_view symbol_reader;
  // The runtime struct begins with the interpreter's own _Py_DebugOffsets (3.13 on, gh-107944).
  // A version newer than every table is read with the newest one, which says true.
  bool starts_with_debug_offsets = false;
  // Whether the interpreter is shutting down: a PyThreadState * that Py_Finalize sets to the
  // finalizing thread once atexit handlers and the join of non-daemon threads are done (module
  // teardown and __del__ methods run after it). Either at this offset in runtime.symbol
  // (_PyRuntime.finalizing / _finalizing, 3.7 on) or the global named by finalizing_symbol
  // (3.6: _Py_Finalizing); 2.7 keeps no such pointer, and both are absent.
  int32_t finalizing = kAbsent;
  std::string_view finalizing_symbol;
};

// Where the GIL says who holds it.
struct GilLayout {
  // 3.12 on: the interpreter holds a pointer to its GIL struct at this offset; the offsets below
  // are then inside that struct. Before 3.12 they are offsets in _PyRuntime.
  int32_t interpreter_gil = kAbsent;
  int32_t locked = kAbsent;       // int: held now
  int32_t last_holder = kAbsent;  // PyThreadState *: the thread that took it last
  int32_t enabled = kAbsent;      // int, free-threaded builds: the GIL is in use at all
  // 2.7, 3.6: a PyThreadState * variable that is set exactly while a thread holds the GIL.
  std::string_view holder_symbol;
  // The condition variables and mutexes a thread waiting for the GIL sleeps on (cond, mutex,
  // switch_cond, switch_mutex of _gil_runtime_state), as [wait_begin, wait_end) in the same base
  // as `locked`: a thread in futex() on an address in there waits for the GIL. kAbsent where the
  // GIL is static data with no symbol (2.7, 3.6).
  int32_t wait_begin = kAbsent;
  int32_t wait_end = kAbsent;
};

// The garbage collector's "a collection is running" flag, which the thread holding the GIL sets
// while it collects (struct _gc_runtime_state.collecting, an int).
struct GcLayout {
  bool in_runtime = false;     // the gc state is in _PyRuntime (3.7, 3.8), else in each interpreter
  int32_t state = kAbsent;     // offset of the gc state there
  int32_t collecting = kAbsent;  // offset of `collecting` in the gc state
};

// How a _thread.lock or _thread.RLock object holds its lock.
enum class LockModel : uint8_t {
  kNone,              // no such variant
  // PyThread_type_lock: a pointer to a malloc'ed sem_t; a blocked acquire() futex-waits on the
  // sem_t's first word, so the futex address names the lock.
  kSemaphorePointer,
  // PyMutex, one byte inside the object (gh-114271 for Lock, 3.13.x; RLock in 3.14); a blocked
  // acquire() parks on a per-thread semaphore, see LockLayout::parked_address.
  kPyMutex,
};

// One shape of a lock type, told apart by the type's tp_basicsize: a minor version can change it
// (3.13.0's Lock holds a sem_t pointer, 3.13.5's a PyMutex).
struct LockVariant {
  int32_t basicsize = kAbsent;
  LockModel model = LockModel::kNone;
  int32_t lock = kAbsent;   // offset of the sem_t pointer or the PyMutex
  int32_t owner = kAbsent;  // RLock: the owner's thread ident (0: none)
  int32_t count = kAbsent;  // RLock: how many times the owner acquired it
  int32_t count_bias = 0;   // added to `count`: 3.14's recursive mutex counts re-entries only
};

struct LockLayout {
  std::string_view lock_type = "_thread.lock";    // tp_name
  std::string_view rlock_type = "_thread.RLock";  // empty where RLock is Python code (2.7)
  LockVariant lock[2];
  LockVariant rlock[2];
  // PyMutex waiters (Python/parking_lot.c): a waiting thread futex-waits on the semaphore inside
  // its own stack's `struct wait_entry`, whose `addr` (the PyMutex waited for) lies at this
  // offset from the futex word.
  int32_t parked_address = kAbsent;
  // threading.Thread's daemon flag attribute (2.7 mangles `__daemonic`).
  std::string_view daemon_attribute = "_daemonic";
};

struct InterpreterLayout {
  int32_t next = kAbsent;          // PyInterpreterState.next
  int32_t threads_head = kAbsent;  // PyInterpreterState.threads.head (or tstate_head)
  int32_t id = kAbsent;            // int64_t id
  // The sys module's dict: sys.version (the micro version before Py_Version existed) and
  // sys.modules (the threading module, for thread names).
  int32_t sysdict = kAbsent;
};

struct ThreadStateLayout {
  int32_t next = kAbsent;
  int32_t interp = kAbsent;
  // unsigned long (long before 3.7): pthread_t, threading.get_ident().
  int32_t thread_id = kAbsent;
  // unsigned long: the LWP (3.11 on). Where it is kAbsent, fill_lwps_from_thread_pointers
  // (analyzer.cpp) finds the LWP whose fs_base equals thread_id: on x86-64 glibc a pthread_t is
  // the thread pointer.
  int32_t native_thread_id = kAbsent;
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
  int32_t owner = kAbsent;        // char owner (3.11 on)
  // bool is_entry (3.11 only). Up to 3.10 every frame object is an entry; from 3.12 the frame
  // just inside a skipped owner_by_c_stack / owner_by_interpreter frame is (walk_thread).
  int32_t is_entry = kAbsent;
  int32_t localsplus = kAbsent;   // first slot of locals + cells + stack
  // Free-threaded 3.14 on: each thread may run its own copy of the bytecode (gh-115999);
  // int32 tlbc_index picks it from the code object's co_tlbc array.
  int32_t tlbc_index = kAbsent;
  // Values of `owner` (kAbsent where a version has no such owner) that mark frames to skip.
  // Frames the interpreter pushes for its own use hold no Python code and are skipped: the
  // C-stack shim frames of 3.12 and 3.13 and the interpreter-owned entry frames of 3.14 on
  // (3.14 keeps FRAME_OWNED_BY_CSTACK in its enum but never sets it; 3.15 removed it).
  int32_t owner_by_c_stack = kAbsent;
  int32_t owner_by_interpreter = kAbsent;
  // Tag bits to clear in f_executable and in the fast slots: 3.14 made them _PyStackRef, whose
  // low bits are flags (gh-117139).
  uint64_t stack_ref_tag_mask = 0;
};

struct CodeLayout {
  LineTableKind line_table_kind = LineTableKind::kLocationTable;
  int32_t filename = kAbsent;
  int32_t name = kAbsent;
  int32_t qualname = kAbsent;        // 3.11 on; earlier versions have co_name only
  int32_t first_line = kAbsent;      // int co_firstlineno
  int32_t line_table = kAbsent;      // bytes: co_lnotab / co_linetable
  int32_t code_adaptive = kAbsent;   // bytecode stored inline in the code object (3.11 on)
  int32_t thread_local_bytecode = kAbsent;  // co_tlbc: { Py_ssize_t size; char *entries[] }
  bool lnotab_signed = true;         // co_lnotab line increments are signed from 3.6 on
};

// Where an instance keeps its attributes (__dict__), for reading e.g. Thread._name.
enum class InstanceDictModel : uint8_t {
  kDictOffset,          // up to 3.10: the type's tp_dictoffset locates a dict pointer
  kManagedDictValues,   // 3.11: dict pointer before the object, else a values array before that
  kTaggedDictOrValues,  // 3.12: one word before the object: a dict, or values - 1 (odd)
  kInlineValues,        // 3.13 on: dict pointer before the object, else values after the object
};

struct InstanceLayout {
  InstanceDictModel model = InstanceDictModel::kDictOffset;
  int32_t type_basicsize = 32;      // PyTypeObject.tp_basicsize
  int32_t type_flags = 168;         // PyTypeObject.tp_flags
  int32_t type_dictoffset = 288;    // PyTypeObject.tp_dictoffset
  int32_t type_base = 256;          // PyTypeObject.tp_base: subclasses of a C type (Task)
  int32_t type_call = 128;          // PyTypeObject.tp_call: what runs first when one is called
  // PyTypeObject.tp_members: a NULL-named-terminated array of PyMemberDef { name; int type;
  // Py_ssize_t offset; int flags; doc } (40 bytes each), which holds a class's __slots__.
  int32_t type_members = 240;
  int32_t heap_type_cached_keys = kAbsent;  // PyHeapTypeObject.ht_cached_keys: split-table keys
  int32_t managed_dict = -24;       // offset from the object of its managed dict pointer (3.11 on)
  int32_t managed_values = -32;     // 3.11: offset from the object of its values pointer
};

struct VariablesLayout {
  // Frame fields (both frame models).
  int32_t frame_globals = kAbsent;
  int32_t frame_builtins = kAbsent;
  // Code fields: the names of the frame's fast slots (locals, cells, free variables), in slot
  // order. One tuple (co_localsplusnames, 3.11 on) or three (co_varnames, co_cellvars,
  // co_freevars) read one after the other.
  int32_t code_local_names = kAbsent;
  int32_t code_cell_names = kAbsent;
  int32_t code_free_names = kAbsent;
  // co_nlocals (int): how many of co_localsplusnames' first slots are plain locals, the rest being
  // cells and free variables (3.11 on; before, co_varnames holds just those). libpython.py lists
  // only these.
  int32_t code_local_count = kAbsent;
  int32_t tuple_items = 24;    // PyTupleObject.ob_item (32 from 3.14: after a cached ob_hash)
  int32_t list_items = 24;     // PyListObject.ob_item (a pointer to the array)
  int32_t cell_reference = 16; // PyCellObject.ob_ref
  int32_t float_value = 16;    // PyFloatObject.ob_fval
  int32_t module_dict = 16;    // PyModuleObject.md_dict
  IntModel int_model = IntModel::kSignedSize;
  int32_t int_size = 16;       // ob_size or lv_tag
  int32_t int_digits = 24;     // ob_digit
  // Python 2 has two integer types: `long` stores digits like 3's int, `int` (PyIntObject) a
  // C long at this offset. kAbsent where int is the only integer type.
  int32_t machine_int_value = kAbsent;
  uint8_t int_digit_bits = 30;
  DictModel dict_model = DictModel::kKeysLog2;
  int32_t dict_used = 16;      // ma_used
  int32_t dict_keys = 32;      // ma_keys (2.7: ma_table)
  int32_t dict_values = 40;    // ma_values: split-table values (or 2.7's ma_mask)
  int32_t dict_values_array = 0;  // offset of the first value inside ma_values
  int32_t keys_size = kAbsent;    // dk_size (kKeysSize) or dk_log2_size (kKeysLog2, uint8)
  int32_t keys_log2_index_bytes = kAbsent;  // uint8 (kKeysLog2)
  int32_t keys_kind = kAbsent;              // uint8 dk_kind: 0 general entries, else unicode
  int32_t keys_entry_count = kAbsent;       // dk_nentries
  int32_t keys_indices = kAbsent;           // dk_indices: the index array, entries follow it
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
  // Python 2's `unicode` (PyUnicodeObject): a length and a pointer to Py_UNICODE units, 2 or 4
  // bytes wide as the build was configured (--enable-unicode=ucs2/ucs4). The width is not in
  // the headers: the analyzer sets it from the build's exported names (PyUnicodeUCS2_* or
  // PyUnicodeUCS4_*); kAbsent while unknown.
  int32_t python2_unicode_length = kAbsent;
  int32_t python2_unicode_buffer = kAbsent;
  int32_t python2_unicode_width = kAbsent;
};

// Built-in callables and exceptions, for reprs like libpython.py's ("<built-in method acquire of
// _thread.lock object at remote 0x...>", "<method-wrapper '__init__' of X object at 0x...>",
// "ValueError('text',)") and for naming the built-in a thread is calling (builtin_call.h).
// Offsets inside objects; the defaults are the 16-byte object header's, free-threaded tables
// move them with the header.
struct CallablesLayout {
  int32_t cfunction_method_def = 16;  // PyCFunctionObject.m_ml (PyMethodDef *)
  int32_t cfunction_self = 24;        // PyCFunctionObject.m_self (NULL: a plain function)
  int32_t method_def_name = 0;        // PyMethodDef.ml_name (const char *)
  int32_t method_def_function = 8;    // PyMethodDef.ml_meth (the C function)
  int32_t method_wrapper_descriptor = 16;  // wrapperobject.descr (PyWrapperDescrObject *)
  int32_t method_wrapper_self = 24;        // wrapperobject.self
  // PyWrapperDescrObject.d_base (struct wrapperbase *): after d_type, d_name and (3.3 on)
  // d_qualname.
  int32_t wrapper_descriptor_base = 40;
  int32_t wrapper_descriptor_wrapped = 48;  // d_wrapped: the slot function the wrapper calls
  int32_t wrapper_base_name = 0;             // wrapperbase.name (const char *)
  int32_t wrapper_base_wrapper = 24;         // wrapperbase.wrapper (the C wrapper function)
  int32_t exception_args = 24;               // PyBaseExceptionObject.args (after dict)
};

// How a suspended frame records the top of its value stack: an `await` leaves the awaitable there.
enum class StackTopModel : uint8_t {
  kNone,
  kPointerPastTop,        // a pointer one past the top slot: f_stacktop (up to 3.9), stackpointer (3.14 on)
  kDepthFromValueStack,   // 3.10: f_valuestack (pointer) and int f_stackdepth
  kIndexFromLocalsplus,   // 3.11 to 3.13: int stacktop, slots counted from localsplus
};

// asyncio's tasks (issue 12): the C `_asyncio` module's Future and Task objects
// (Modules/_asynciomodule.c FutureObj / TaskObj), coroutines (Include/internal/pycore_genobject.h
// or genobject.h), and where the tasks are registered. Offsets inside objects; kAbsent where the
// version has no such field. Tables without task_coro cannot read tasks (2.7, 3.6).
struct AsyncioLayout {
  // Module attributes of asyncio.tasks that hold tasks: WeakSets or sets (3.7 to 3.11:
  // _all_tasks; 3.12 on: _scheduled_tasks and _eager_tasks; from 3.14 these hold only tasks that
  // are not native, see thread_tasks_head).
  std::string_view task_sets[2] = {"_all_tasks", ""};
  std::string_view current_tasks = "_current_tasks";  // dict: event loop -> its running task
  // 3.14 on: native tasks link themselves into their thread's list (a circular `llist_node` of
  // {next, prev}) at this offset of _PyThreadStateImpl, and into the interpreter's when their
  // thread ends; task_node is the node inside the task. The _asyncio module publishes these in
  // its own debug offsets (section .AsyncioDebug), which win when found.
  int32_t thread_tasks_head = kAbsent;
  int32_t interpreter_tasks_head = kAbsent;
  int32_t thread_running_task = kAbsent;  // PyObject *: the task the thread runs now
  int32_t task_node = kAbsent;
  // FutureObj (the Task's base).
  int32_t future_loop = 16;
  int32_t future_callback0 = 24;  // the first callback (most futures have one)
  int32_t future_callbacks = 40;  // a list of the others: (callback, context) tuples
  int32_t future_state = kAbsent;  // int: 0 pending, 1 cancelled, 2 finished
  // TaskObj.
  int32_t task_fut_waiter = kAbsent;  // the Future the task waits for
  int32_t task_coro = kAbsent;
  int32_t task_name = kAbsent;  // a str, or (3.13 on, until asked) an int counter (3.8 on)
  int32_t future_iter_future = 16;  // _asyncio.FutureIter: the Future an `await fut` iterates
  // Coroutines: the frame, by pointer (PyFrameObject *, up to 3.10) or embedded (3.11 on).
  int32_t coroutine_frame_pointer = kAbsent;
  int32_t coroutine_frame = kAbsent;
  // cr_qualname (a str), where code objects have no co_qualname (up to 3.10).
  int32_t coroutine_qualname = kAbsent;
  // int8 frame state (3.11 on): the values between these two (inclusive) are "suspended".
  int32_t coroutine_frame_state = kAbsent;
  int8_t suspended_state_low = 0;
  int8_t suspended_state_high = -1;
  // Where a suspended frame's value stack ends: offsets in the frame struct.
  StackTopModel stack_top_model = StackTopModel::kNone;
  int32_t stack_top = kAbsent;    // f_stacktop / f_stackdepth / stacktop / stackpointer
  int32_t value_stack = kAbsent;  // 3.10: f_valuestack
  // PySetObject and weakref (PyWeakReference.wr_object).
  int32_t set_mask = 32;
  int32_t set_table = 40;
  int32_t weakref_object = 16;
  int32_t function_closure = kAbsent;  // PyFunctionObject.func_closure: a tuple of cells
  int32_t method_self = 24;            // PyMethodObject.im_self (bound methods)
  int32_t method_function = 16;        // PyMethodObject.im_func
};

struct Layout {
  std::string_view name;        // "3.11", "3.13t"
  // The C function that runs Python frames, for splicing them into native stacks:
  // PyEval_EvalFrameEx in 2.7, _PyEval_EvalFrameDefault from 3.6 on.
  std::string_view eval_loop_function = "_PyEval_EvalFrameDefault";
  std::string_view source_tag;  // the CPython tag whose headers this table was read from
  // threading.Thread's attribute holding its name: Python 2's threading.py spells it `__name`,
  // which the compiler mangles to `_Thread__name`.
  std::string_view thread_name_attribute = "_name";
  int major = 0;
  int minor = 0;
  bool free_threaded = false;
  bool trace_refs = false;  // a Py_TRACE_REFS build's table (cpython/layouts/v2_7d.cpp)
  ObjectLayout object;
  RuntimeLayout runtime;
  GilLayout gil;
  InterpreterLayout interpreter;
  ThreadStateLayout thread_state;
  FrameLayout frame;
  CodeLayout code;
  BytesLayout bytes;
  StringLayout string;
  VariablesLayout variables;
  InstanceLayout instances;
  LockLayout locks;
  GcLayout gc;
  CallablesLayout callables;
  AsyncioLayout asyncio;
};

}  // namespace hangpy::cpython
