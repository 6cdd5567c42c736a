// What the engine finds: interpreters, threads and their Python frames. Plain data, no target
// pointers to follow; formatters (report/) and shells read it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "cpython/layout.h"

namespace hangpy::cpython {

struct PythonFrame {
  uint64_t address = 0;       // the frame struct (PyFrameObject or _PyInterpreterFrame)
  uint64_t code_address = 0;  // its code object
  std::string file;
  std::string function;  // co_name
  std::string qualname;  // co_qualname where the version has it, else co_name
  std::optional<int> line;
  // 3.11 on (PEP 657 location tables): where the running expression ends, and its columns as
  // 0-based UTF-8 byte offsets into the source lines, as code.co_positions() gives them.
  std::optional<int> end_line;
  std::optional<int> column;
  std::optional<int> end_column;
  int first_line = 0;
  bool is_entry = false;  // the outermost frame of one eval-loop call (native stack splicing)
  // For an entry frame from 3.12 on: the address of the shim/entry frame just outside it, which
  // the eval loop keeps among its own C locals. The native frame whose stack holds that address is
  // the eval-loop call that runs this group, whatever its symbol (a stripped build may have moved
  // the loop into an unnamed clone). 0 where the version pushes no such frame.
  uint64_t entry_frame_on_c_stack = 0;
};

struct PythonThread {
  uint64_t thread_state = 0;
  uint64_t interpreter = 0;  // the PyInterpreterState this thread state belongs to
  int64_t interpreter_id = 0;
  uint64_t thread_id = 0;                       // threading.get_ident()
  std::optional<uint64_t> native_thread_id;     // the LWP
  // The id the thread state records, where it names the thread in another PID namespace than the
  // target's (a container's process read from the host): native_thread_id is then the target's.
  std::optional<uint64_t> namespace_thread_id;
  std::optional<std::string> name;              // threading.Thread.name, where known
  bool holds_gil = false;
  std::vector<PythonFrame> frames;              // innermost first
  std::optional<Error> error;                   // why the frame chain ended early
};

struct PythonVersion {
  int major = 0;
  int minor = 0;
  int micro = -1;  // -1: unknown
  bool free_threaded = false;
  // Built with Py_TRACE_REFS (--with-pydebug up to 3.7): every object has two more pointers first.
  bool trace_refs = false;
  std::string text() const;  // "3.11.7", "3.13t", "2.7.18d"
};

struct ProcessStacks {
  PythonVersion version;
  std::string version_source;   // how the version was found ("Py_Version", "--python", ...)
  std::shared_ptr<const Layout> layout;
  std::string layout_source;    // "compiled table" or "_Py_DebugOffsets (v3.13.0 schema)"
  uint64_t runtime_address = 0;
  // The first interpreter's GIL state: the base that the layout's gil offsets are relative to
  // (_PyRuntime before 3.12, the _gil_runtime_state from 3.12 on); nullopt where the GIL is no
  // struct (2.7, 3.6) or it cannot be read.
  std::optional<uint64_t> gil_address;
  bool gil_disabled = false;  // free-threaded build running without a GIL
  std::vector<PythonThread> threads;
  // threading's Thread objects by ident (threading._active of every interpreter), as naming the
  // threads found them, for the diagnosis to read their attributes; nullopt: not looked for.
  std::optional<std::unordered_map<uint64_t, uint64_t>> thread_objects;
  // Whether the interpreter is shutting down (Py_Finalize has begun tearing it down); nullopt
  // where the version keeps no such record (2.7) or it could not be read.
  std::optional<bool> finalizing;
  uint64_t finalizing_thread_state = 0;  // the thread running Py_Finalize, when finalizing
  // The LWPs of the target's OS threads that run no Python (no thread state in any interpreter):
  // NCCL, gloo, OpenMP workers and the like. nullopt when that cannot be told: the target lists
  // no OS threads, or some Python thread's LWP is unknown.
  std::optional<std::vector<int64_t>> threads_without_python;
  std::vector<std::string> warnings;  // problems: some of the process could not be read
  std::vector<std::string> notes;     // facts worth knowing that cost nothing (debug offsets)
  bool partial() const;  // some thread's chain ended on an error
};

// Recursion, as Python's own tracebacks fold it (traceback.py): a run of frames at one file, line
// and function shows kRepeatsShown of them, the rest counted. The reports fold by it, and the
// locals are read only for the frames shown (stack_locals.h).
inline constexpr size_t kRepeatsShown = 3;

// For frames in display order: whether frame i repeats frame i - 1 (same file, line, function).
bool repeats_previous(const PythonFrame& frame, const PythonFrame& previous);

}  // namespace hangpy::cpython
