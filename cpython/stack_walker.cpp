#include "cpython/stack_walker.h"

#include <unordered_set>

#include "cpython/line_table.h"

namespace hangpy::cpython {
namespace {

template <typename T>
Expected<T> read_field(const AddressSpace& memory, uint64_t base, int32_t offset) {
  if (offset == kAbsent) return make_error(ErrorKind::kUnsupported, "field absent in this layout");
  return read_value<T>(memory, base + static_cast<uint64_t>(offset));
}

}  // namespace

StackWalker::StackWalker(const AddressSpace& memory, const Layout& layout)
    : memory_(memory), layout_(layout), objects_(memory, layout) {}

Expected<StackWalker::ThreadStateList> StackWalker::thread_states(uint64_t interpreter) const {
  const auto& t = layout_.thread_state;
  auto head = read_field<uint64_t>(memory_, interpreter, layout_.interpreter.threads_head);
  if (!head) return std::unexpected(head.error());
  ThreadStateList list;
  std::unordered_set<uint64_t> seen;
  for (uint64_t state = *head; state != 0; ) {
    if (!seen.insert(state).second) {
      list.cut = Error{ErrorKind::kCorrupt,
                       fmt::format("the thread state list loops (back to 0x{:x}) after {} states",
                                   state, list.states.size()),
                       state};
      break;
    }
    if (list.states.size() >= kMaxThreadsPerInterpreter) {
      list.cut = Error{ErrorKind::kCorrupt,
                       fmt::format("the thread state list goes on past {} states; the rest are "
                                   "not read", kMaxThreadsPerInterpreter),
                       state};
      break;
    }
    list.states.push_back(state);
    auto next = read_field<uint64_t>(memory_, state, t.next);
    if (!next) return std::unexpected(next.error());
    state = *next;
  }
  return list;
}

std::vector<PythonThread> StackWalker::walk_interpreters(uint64_t first_interpreter,
                                                         std::vector<std::string>& warnings) {
  // New interpreters, like new thread states, are pushed at the head: list them all first, then
  // walk from the tail so that the main interpreter and its main thread come first.
  std::vector<uint64_t> interpreters;
  std::unordered_set<uint64_t> seen;
  for (uint64_t interp = first_interpreter; interp != 0;) {
    if (!seen.insert(interp).second || seen.size() > kMaxInterpreters) {
      warnings.push_back(fmt::format("interpreter list loops or is too long at 0x{:x}", interp));
      break;
    }
    interpreters.push_back(interp);
    auto next = read_field<uint64_t>(memory_, interp, layout_.interpreter.next);
    if (!next) {
      warnings.push_back(fmt::format("cannot read the next interpreter: {}",
                                     next.error().describe()));
      break;
    }
    interp = *next;
  }
  std::vector<PythonThread> threads;
  for (auto interp = interpreters.rbegin(); interp != interpreters.rend(); ++interp) {
    int64_t id = read_field<int64_t>(memory_, *interp, layout_.interpreter.id).value_or(0);
    auto states = thread_states(*interp);
    if (!states) {
      warnings.push_back(fmt::format("interpreter {}: cannot list threads: {}", id,
                                     states.error().describe()));
      continue;
    }
    if (states->cut)
      warnings.push_back(fmt::format("interpreter {}: {}", id, states->cut->describe()));
    for (auto it = states->states.rbegin(); it != states->states.rend(); ++it)
      threads.push_back(walk_thread(*it, id, *interp));
  }
  return threads;
}

Expected<uint64_t> StackWalker::innermost_frame(uint64_t thread_state) const {
  uint64_t pointer = thread_state;
  for (int32_t offset : layout_.thread_state.frame_path) {
    if (offset == kAbsent) break;
    auto next = read_value<uint64_t>(memory_, pointer + static_cast<uint64_t>(offset));
    if (!next) return std::unexpected(next.error());
    pointer = *next;
    if (pointer == 0) return 0;  // no frame: the thread runs no Python code now
  }
  return pointer;
}

PythonThread StackWalker::walk_thread(uint64_t thread_state, int64_t interpreter_id,
                                      uint64_t interpreter) {
  const auto& t = layout_.thread_state;
  PythonThread thread;
  thread.thread_state = thread_state;
  thread.interpreter = interpreter;
  thread.interpreter_id = interpreter_id;
  if (auto id = read_field<uint64_t>(memory_, thread_state, t.thread_id)) thread.thread_id = *id;
  if (t.native_thread_id != kAbsent) {
    if (auto lwp = read_field<uint64_t>(memory_, thread_state, t.native_thread_id))
      thread.native_thread_id = *lwp;
  }
  // From here on the reads are this thread's own (its frames, its C stack's frame pointer, their
  // code); the thread state itself was read with the list of threads, which every thread shares.
  struct Attribution {
    const AddressSpace& memory;
    ~Attribution() { memory.attribute_reads(std::nullopt); }
  } attribution{memory_};
  memory_.attribute_reads(thread.native_thread_id ? thread.native_thread_id
                                                  : thread.thread_id != 0 ? std::optional(thread.thread_id) : std::nullopt);

  auto frame = innermost_frame(thread_state);
  if (!frame) {
    thread.error = frame.error();
    return thread;
  }
  std::unordered_set<uint64_t> seen;
  for (uint64_t address = *frame; address != 0;) {
    if (!seen.insert(address).second) {
      thread.error = Error{ErrorKind::kCorrupt, "frame chain loops", address};
      break;
    }
    if (seen.size() > kMaxFramesPerThread) {
      thread.error = Error{ErrorKind::kCorrupt, "frame chain too long", address};
      break;
    }
    auto raw = read_raw_frame(address);
    if (!raw) {
      thread.error = raw.error();
      break;
    }
    if (raw->skip && !thread.frames.empty()) {
      // A shim or entry frame sits just outside the first frame of each eval-loop call.
      thread.frames.back().is_entry = true;
      // The first one outside the frame is the eval loop's own; any further one is not on that
      // call's C stack (3.15 ends each thread's chain with a base frame in its thread state).
      if (thread.frames.back().entry_frame_on_c_stack == 0)
        thread.frames.back().entry_frame_on_c_stack = address;
    }
    if (!raw->skip) {
      auto decoded = decode_frame(address, *raw);
      if (!decoded) {
        thread.error = decoded.error();
        break;
      }
      thread.frames.push_back(std::move(*decoded));
    }
    address = raw->previous;
  }
  return thread;
}

Expected<PythonFrame> StackWalker::frame_at(uint64_t frame) {
  auto raw = read_raw_frame(frame);
  if (!raw) return std::unexpected(raw.error());
  return decode_frame(frame, *raw);
}

Expected<StackWalker::RawFrame> StackWalker::read_raw_frame(uint64_t frame) const {
  const FrameLayout& f = layout_.frame;
  RawFrame raw;
  auto previous = read_field<uint64_t>(memory_, frame, f.previous);
  if (!previous) return std::unexpected(previous.error());
  raw.previous = *previous;
  if (f.owner != kAbsent) {
    auto owner = read_field<int8_t>(memory_, frame, f.owner);
    if (!owner) return std::unexpected(owner.error());
    if ((f.owner_by_c_stack != kAbsent && *owner == f.owner_by_c_stack) ||
        (f.owner_by_interpreter != kAbsent && *owner == f.owner_by_interpreter)) {
      raw.skip = true;  // a shim frame: the eval loop's own bookkeeping, no Python code
      raw.is_entry = true;
      return raw;
    }
  }
  // Up to 3.10 each Python call recursed into the eval loop with its own frame object, so every
  // frame is the outermost of its call (the inlined calls of 3.11, bpo-45256, ended that).
  if (f.model == FrameModel::kFrameObject) raw.is_entry = true;
  if (f.is_entry != kAbsent) {
    auto entry = read_field<uint8_t>(memory_, frame, f.is_entry);
    if (!entry) return std::unexpected(entry.error());
    raw.is_entry = *entry != 0;
  }
  auto code = read_field<uint64_t>(memory_, frame, f.code);
  if (!code) return std::unexpected(code.error());
  raw.code = *code & ~f.stack_ref_tag_mask;
  auto offset = read_instruction_offset(frame, raw.code);
  if (!offset) return std::unexpected(offset.error());
  raw.instruction_offset = *offset;
  return raw;
}

Expected<int64_t> StackWalker::read_instruction_offset(uint64_t frame, uint64_t code) const {
  const FrameLayout& f = layout_.frame;
  switch (f.instruction_kind) {
    case InstructionKind::kLastiBytes:
    case InstructionKind::kLastiCodeUnits: {
      auto lasti = read_field<int32_t>(memory_, frame, f.instruction);
      if (!lasti) return std::unexpected(lasti.error());
      return f.instruction_kind == InstructionKind::kLastiBytes ? *lasti : int64_t{*lasti} * 2;
    }
    case InstructionKind::kPrevInstr:
    case InstructionKind::kCurrentInstr: {
      auto pointer = read_field<uint64_t>(memory_, frame, f.instruction);
      if (!pointer) return std::unexpected(pointer.error());
      auto bytecode = bytecode_of(frame, code);
      if (!bytecode) return std::unexpected(bytecode.error());
      return static_cast<int64_t>(*pointer - *bytecode);
    }
  }
  return make_error(ErrorKind::kUnsupported, "unknown instruction kind");
}

Expected<uint64_t> StackWalker::bytecode_of(uint64_t frame, uint64_t code) const {
  uint64_t inline_bytecode = code + static_cast<uint64_t>(layout_.code.code_adaptive);
  if (layout_.frame.tlbc_index == kAbsent || layout_.code.thread_local_bytecode == kAbsent)
    return inline_bytecode;
  auto index = read_field<int32_t>(memory_, frame, layout_.frame.tlbc_index);
  if (!index) return std::unexpected(index.error());
  if (*index == 0) return inline_bytecode;  // copy 0 is the code object's own bytecode
  auto array = read_field<uint64_t>(memory_, code, layout_.code.thread_local_bytecode);
  if (!array) return std::unexpected(array.error());
  auto size = read_value<int64_t>(memory_, *array);
  if (!size) return std::unexpected(size.error());
  if (*index < 0 || *index >= *size)
    return make_error(ErrorKind::kCorrupt, fmt::format("bytecode copy {} of {}", *index, *size),
                      frame);
  return read_pointer(memory_, *array + 8 + 8 * static_cast<uint64_t>(*index));
}

Expected<const StackWalker::CodeInfo*> StackWalker::code_info(uint64_t code) {
  if (auto cached = codes_.find(code); cached != codes_.end()) return &cached->second;
  if (auto ok = objects_.expect_type(code, "code"); !ok) return std::unexpected(ok.error());
  const CodeLayout& c = layout_.code;
  CodeInfo info;
  auto read_string_field = [&](int32_t offset) -> Expected<std::string> {
    auto object = read_field<uint64_t>(memory_, code, offset);
    if (!object) return std::unexpected(object.error());
    return objects_.read_string(*object);
  };
  auto file = read_string_field(c.filename);
  if (!file) return std::unexpected(file.error());
  auto function = read_string_field(c.name);
  if (!function) return std::unexpected(function.error());
  info.file = std::move(*file);
  info.function = std::move(*function);
  info.qualname = info.function;
  if (c.qualname != kAbsent) {
    if (auto qualname = read_string_field(c.qualname)) info.qualname = std::move(*qualname);
  }
  auto first_line = read_field<int32_t>(memory_, code, c.first_line);
  if (!first_line) return std::unexpected(first_line.error());
  info.first_line = *first_line;
  // A missing line table costs only the line number, not the frame.
  if (auto table = read_field<uint64_t>(memory_, code, c.line_table)) {
    if (auto bytes = objects_.read_bytes(*table)) info.line_table = std::move(*bytes);
  }
  return &codes_.emplace(code, std::move(info)).first->second;
}

Expected<PythonFrame> StackWalker::decode_frame(uint64_t frame, const RawFrame& raw) {
  auto info = code_info(raw.code);
  if (!info) return std::unexpected(info.error());
  PythonFrame decoded;
  decoded.address = frame;
  decoded.code_address = raw.code;
  decoded.file = (*info)->file;
  decoded.function = (*info)->function;
  decoded.qualname = (*info)->qualname;
  decoded.first_line = (*info)->first_line;
  decoded.is_entry = raw.is_entry;
  if (raw.instruction_offset < 0) {
    decoded.line = decoded.first_line;  // the frame has not started running its code yet
  } else if (layout_.code.line_table_kind == LineTableKind::kLocationTable) {
    auto position = position_from_location_table((*info)->line_table, decoded.first_line,
                                                 raw.instruction_offset);
    if (position) {
      decoded.line = position->line;
      decoded.end_line = position->end_line;
      decoded.column = position->column;
      decoded.end_column = position->end_column;
    }
  } else {
    decoded.line = line_for_offset(layout_.code.line_table_kind, (*info)->line_table,
                                   decoded.first_line, raw.instruction_offset,
                                   layout_.code.lnotab_signed);
  }
  return decoded;
}

}  // namespace hangpy::cpython
