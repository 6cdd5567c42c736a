// The one version-independent walker: interpreters -> thread states -> frames -> code objects.
// Everything it needs to know about a version comes from the Layout it is given. Every chain it
// follows has a visited set and a cap, so corrupt memory ends a chain with an error, never a loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cpython/address_space.h"
#include "cpython/layout.h"
#include "cpython/object_reader.h"
#include "cpython/stacks.h"

namespace hangpy::cpython {

inline constexpr size_t kMaxInterpreters = 256;
inline constexpr size_t kMaxThreadsPerInterpreter = 16384;
inline constexpr size_t kMaxFramesPerThread = 100000;  // far past any recursion limit in use

class StackWalker {
 public:
  StackWalker(const AddressSpace& memory, const Layout& layout);

  // Every thread of every interpreter, starting from the first interpreter state. Problems that
  // end a chain early are appended to `warnings` (interpreters, threads) or recorded on the thread.
  std::vector<PythonThread> walk_interpreters(uint64_t first_interpreter,
                                              std::vector<std::string>& warnings);
  // One thread's frames, innermost first.
  PythonThread walk_thread(uint64_t thread_state, int64_t interpreter_id,
                           uint64_t interpreter = 0);

  // One frame struct decoded on its own, not followed: a suspended coroutine's frame, which no
  // thread's chain holds.
  Expected<PythonFrame> frame_at(uint64_t frame);

  // The thread states of one interpreter, in list order. A list that loops or runs past
  // kMaxThreadsPerInterpreter gives the states read until then, with `cut` saying why: a
  // damaged list is no wrong layout. An error: the list's head or a link cannot be read.
  struct ThreadStateList {
    std::vector<uint64_t> states;
    std::optional<Error> cut;
  };
  Expected<ThreadStateList> thread_states(uint64_t interpreter) const;

  const ObjectReader& objects() const { return objects_; }

 private:
  struct CodeInfo {
    std::string file;
    std::string function;
    std::string qualname;
    int first_line = 0;
    std::vector<std::byte> line_table;
  };
  // What one frame struct says, before its code object is decoded.
  struct RawFrame {
    uint64_t code = 0;
    uint64_t previous = 0;
    int64_t instruction_offset = -1;  // bytes from the start of the bytecode; <0: not started
    bool is_entry = false;
    bool skip = false;  // a frame the interpreter pushed for its own use (shim frames)
  };

  Expected<uint64_t> innermost_frame(uint64_t thread_state) const;
  Expected<RawFrame> read_raw_frame(uint64_t frame) const;
  Expected<int64_t> read_instruction_offset(uint64_t frame, uint64_t code) const;
  // Where the bytecode the frame runs starts: the code object's own, or a thread's copy.
  Expected<uint64_t> bytecode_of(uint64_t frame, uint64_t code) const;
  Expected<const CodeInfo*> code_info(uint64_t code);
  Expected<PythonFrame> decode_frame(uint64_t frame, const RawFrame& raw);

  const AddressSpace& memory_;
  const Layout& layout_;
  ObjectReader objects_;
  std::unordered_map<uint64_t, CodeInfo> codes_;  // code objects recur across frames and threads
};

}  // namespace hangpy::cpython
