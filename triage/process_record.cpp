#include "triage/process_record.h"

#include <charconv>
#include <map>

#include "triage/json_view.h"

#include <fmt/format.h>

namespace hangpy::triage {
namespace {

// A document from elsewhere may list any number of pids: a pipe's holders are a few processes.
constexpr size_t kMaxOtherEndPids = 64;
constexpr size_t kMaxPipeEnds = 1024;  // as many as a snapshot's note keeps
// The parser's stack holds the values of the arrays and objects still open: a rank's document
// needs tens of KB; starting there spares the reallocations of growing from 1 KB.
constexpr size_t kParseStackBytes = 64 << 10;

// Reads of documents that came from other machines: any field may be missing or of another type
// (JsonView answers "absent"), and neither may stop the triage of the rest.
Frame python_frame(JsonView frame) {
  Frame result;
  result.kind = Frame::Kind::kPython;
  result.function = frame.text("qualname");
  if (result.function.empty()) result.function = frame.text("function");
  result.file = frame.text("file");
  if (auto line = frame["line"].integer()) result.line = static_cast<int>(*line);
  if (auto repeated = frame["repeated"].unsigned_integer()) result.repeated = *repeated;
  return result;
}

Frame native_frame(JsonView frame) {
  Frame result;
  result.kind = Frame::Kind::kNative;
  result.function = frame.text("demangled");
  if (result.function.empty()) result.function = frame.text("symbol");
  result.file = frame.text("module");
  // A frame without a symbol is told apart by where it is in its module.
  if (result.function.empty()) {
    auto offset = frame["module_offset"].integer();
    result.function = offset ? fmt::format("??+0x{:x}", *offset) : "??";
  }
  return result;
}

std::optional<std::vector<Frame>> native_frames_of(JsonView thread) {
  JsonView frames = thread["native_stack"]["frames"];
  if (frames.size() == 0) return std::nullopt;
  std::vector<Frame> result;
  result.reserve(frames.size());
  for (JsonView frame : frames) {
    if (!frame.is_object()) continue;
    result.push_back(frame["kind"].raw() == "python" ? python_frame(frame) : native_frame(frame));
  }
  return result;
}

// "0x7f12..." as a number; nullopt for anything else.
std::optional<uint64_t> address_of(JsonView value) {
  std::string_view text = value.raw();
  if (!text.starts_with("0x") || text.size() == 2) return std::nullopt;
  uint64_t result = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data() + 2, end, result, 16);
  if (error != std::errc() || stop != end) return std::nullopt;
  return result;
}

void add_blocked_on(JsonView blocked, ThreadRecord& record) {
  std::string kind = blocked.text("kind");
  std::string description = blocked.text("description");
  if (!kind.empty()) record.blocked_kind = std::move(kind);
  if (!description.empty()) record.blocked_description = std::move(description);
  if (JsonView object = blocked["object"]; object.present()) record.blocked_object = address_of(object);
  record.holder_gone = blocked["holder_gone"].is_true();
  record.owner_ident = blocked["owner_thread_id"].integer();
  record.child_pid = blocked["child_pid"].integer();
  record.blocked_fd = blocked["fd"].integer();
  for (JsonView fd : blocked["child_pipe_fds"]) {
    if (record.child_pipe_fds.size() >= 2) break;
    if (auto number = fd.integer()) record.child_pipe_fds.push_back(*number);
  }
  for (JsonView other : blocked["other_end_pids"]) {
    if (record.other_end_pids.size() >= kMaxOtherEndPids) break;
    if (auto number = other.integer()) record.other_end_pids.push_back(*number);
  }
}

FrameLocals frame_locals(FrameLocals::Entries&& entries, SharingPool* pool) {
  if (pool != nullptr) return pool->intern(std::move(entries));
  if (entries.empty()) return FrameLocals();
  return FrameLocals(std::make_shared<const FrameLocals::Entries>(std::move(entries)));
}

FrameList frame_list(FrameList::Frames&& frames, SharingPool* pool) {
  if (pool != nullptr) return pool->intern(std::move(frames));
  if (frames.empty()) return FrameList();
  return FrameList(std::make_shared<FrameList::Frames>(std::move(frames)));
}

ThreadRecord thread_record(JsonView thread, std::optional<int64_t> pid, SharingPool* pool) {
  ThreadRecord record;
  record.native_thread_id = thread["native_thread_id"].integer();
  record.thread_id = thread["thread_id"].integer();
  record.name = thread["name"].string();
  JsonView frames = thread["frames"];
  if (frames.is_array()) {
    bool any_locals = false;
    std::vector<FrameLocals> locals;
    FrameList::Frames python_frames;
    python_frames.reserve(frames.size());
    for (JsonView frame : frames) {
      if (!frame.is_object()) continue;
      python_frames.push_back(python_frame(frame));
      JsonView variables = frame["locals"];
      FrameLocals::Entries entries;
      if (variables.is_array()) {
        any_locals = true;
        entries.reserve(variables.size());
        for (JsonView variable : variables) {
          auto name = variable["name"].string();
          auto repr = variable["repr"].string();
          if (name && repr) entries.emplace_back(std::move(*name), std::move(*repr));
        }
      }
      locals.push_back(frame_locals(std::move(entries), pool));
    }
    record.python_frames = frame_list(std::move(python_frames), pool);
    if (any_locals) record.python_locals = std::move(locals);
  }
  record.native_frames = native_frames_of(thread);
  if (std::string error = thread.text("error"); !error.empty()) record.error = std::move(error);
  JsonView state = thread["state"];
  if (state.is_object()) {
    record.main_thread = state["main_thread"].is_true();
    record.idle = state["idle"].is_true();
    for (JsonView lock : state["held_locks"])
      if (auto address = address_of(lock)) record.held_locks.push_back(*address);
  } else {
    record.main_thread = pid && record.native_thread_id == pid;
  }
  if (JsonView blocked = thread["blocked_on"]; blocked.is_object()) add_blocked_on(blocked, record);
  return record;
}

// The pending tasks of the document's "asyncio" object: running ones are on their thread's
// stack already, done ones wait for nothing. A task whose coroutine stack could not be read adds
// nothing to compare.
void add_asyncio_tasks(JsonView document, ProcessRecord& record) {
  JsonView asyncio = document["asyncio"];
  JsonView tasks = asyncio["tasks"];
  if (!tasks.is_array()) return;
  for (JsonView task : tasks) {
    if (task["state"].raw() != "pending") continue;
    JsonView stack = task["coroutine_stack"];
    if (stack.size() == 0) continue;
    ThreadRecord record_of_task;
    record_of_task.asyncio_task = true;
    std::string name = task.text("name");
    if (!name.empty()) record_of_task.name = name;
    for (size_t i = stack.size(); i-- > 0;)  // innermost first there
      if (stack.at(i).is_object()) record_of_task.python_frames.push_back(python_frame(stack.at(i)));
    if (record_of_task.python_frames.empty()) continue;
    if (JsonView awaits = task["awaits"]; awaits.is_object()) {
      std::string kind = awaits.text("kind");
      std::string detail = awaits.text("detail");
      if (!kind.empty()) record_of_task.blocked_kind = kind;
      if (!detail.empty()) record_of_task.blocked_description = detail;
    }
    record.threads.push_back(std::move(record_of_task));
  }
  // Tasks awaiting each other in a ring: a deadlock of the process, like threads' lock cycles.
  JsonView cycles = asyncio["cycles"];
  if (!cycles.is_array()) return;
  std::map<std::string, std::string> names;  // address -> name
  for (JsonView task : tasks)
    if (task.is_object()) names[task.text("address")] = task.text("name");
  for (JsonView cycle : cycles) {
    if (cycle.size() == 0) continue;
    std::vector<std::string> members;
    for (JsonView address : cycle) {
      std::string text = address.string().value_or("?");
      auto found = names.find(text);
      members.push_back(found != names.end() && !found->second.empty() ? found->second : text);
    }
    record.deadlocks.push_back(
        fmt::format("asyncio tasks {} await each other", fmt::join(members, ", ")));
  }
}

// The document's "look": when it was taken, each thread's CPU time and I/O bytes by then.
void add_look(JsonView document, ProcessRecord& record) {
  JsonView look = document["look"];
  if (!look.is_object()) return;
  record.taken_at = look["unix_time"].number();
  for (JsonView entry : look["threads"]) {
    const std::optional<int64_t> id = entry["native_thread_id"].integer();
    if (!id) continue;
    for (ThreadRecord& thread : record.threads) {
      if (thread.asyncio_task || thread.native_thread_id != id) continue;
      if (auto cpu = entry["cpu_seconds"].number()) thread.cpu_seconds = cpu;
      if (auto io = entry["io_bytes"].unsigned_integer()) thread.io_bytes = io;
      if (auto delay = entry["run_delay_seconds"].number()) thread.run_delay_seconds = delay;
      if (std::string_view state = entry["state"].raw(); state.size() == 1) thread.run_state = state[0];
    }
  }
}

void add_ends(JsonView process, ProcessRecord& record) {
  for (JsonView end : process["pipe_ends"]) {
    if (record.pipe_ends.size() >= kMaxPipeEnds) break;
    auto fd = end["fd"].integer();
    auto inode = end["inode"].unsigned_integer();
    const std::string_view which = end["end"].raw();
    if (!fd || !inode || (which != "read" && which != "write")) continue;
    record.pipe_ends.push_back({*fd, *inode, which == "read"});
  }
  for (JsonView end : process["socket_ends"]) {
    if (record.socket_ends.size() >= kMaxPipeEnds) break;
    auto fd = end["fd"].integer();
    std::string local = end.text("local"), remote = end.text("remote");
    if (!fd || local.empty() || remote.empty()) continue;
    record.socket_ends.push_back({*fd, std::move(local), std::move(remote)});
  }
}

Expected<ProcessRecord> process_record(JsonView document, const std::string& source, SharingPool* pool) {
  if (!document.is_object())
    return make_error(ErrorKind::kInvalidInput, fmt::format("{}: not a coreanalyze --json document", source));
  JsonView threads = document["threads"];
  if (!threads.is_array()) {
    return make_error(ErrorKind::kInvalidInput,
                      fmt::format("{}: not a coreanalyze --json document (no \"threads\")", source));
  }
  ProcessRecord record;
  record.source = source;
  JsonView process = document["process"];  // an empty view (every field absent) when it is not an object
  record.labels = labels_from_view(process);
  record.command = process.text("command");
  add_ends(process, record);
  record.threads.reserve(threads.size());
  for (JsonView thread : threads)
    if (thread.is_object()) record.threads.push_back(thread_record(thread, record.labels.pid, pool));
  // --native-all: the threads that run no Python, by their native stacks alone.
  for (JsonView thread : document["threads_without_python"]) {
    if (!thread["native_stack"].present()) continue;
    ThreadRecord native_only = thread_record(thread, record.labels.pid, pool);
    if (native_only.native_frames) record.threads.push_back(std::move(native_only));
  }
  add_look(document, record);
  add_asyncio_tasks(document, record);
  for (JsonView cycle : document["deadlocks"])
    if (cycle.is_object()) record.deadlocks.push_back(cycle.text("description"));
  return record;
}

}  // namespace

namespace {

nlohmann::json::parser_callback_t cutting_strings(size_t& cut) {
  return [&cut](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    // process.modules, the mapped files (half of a rank's document), is read by no triage: it is
    // lexed and never stored.
    if (event == nlohmann::json::parse_event_t::key && parsed.is_string() && parsed.get_ref<const std::string&>() == "modules")
      return false;
    if ((event == nlohmann::json::parse_event_t::value || event == nlohmann::json::parse_event_t::key) &&
        parsed.is_string()) {
      std::string& text = parsed.get_ref<std::string&>();
      if (text.size() > kMaxTriageString) {
        size_t keep = kMaxTriageString;
        while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xc0) == 0x80) --keep;  // whole characters
        text.resize(keep);
        text += "...";
        text.shrink_to_fit();
        ++cut;
      }
    }
    return true;
  };
}

}  // namespace

nlohmann::json parse_bounded_json(std::istream& stream, size_t& cut) {
  return nlohmann::json::parse(stream, cutting_strings(cut), false);
}

nlohmann::json parse_bounded_json(const std::string& text, size_t& cut) {
  return nlohmann::json::parse(text, cutting_strings(cut), false);
}

Expected<std::vector<ProcessRecord>> records_from_text(std::string& text, const std::string& source,
                                                       size_t& cut, ParseScratch* scratch) {
  // The DOM's values come from a pool whose first megabyte is the scratch's (a rank's document
  // needs ~100 KB of values); the pool frees what it added past it when it goes.
  constexpr size_t kScratchPoolBytes = size_t{1} << 20;
  ParseScratch own;
  ParseScratch& memory = scratch != nullptr ? *scratch : own;
  if (memory.pool.size() < kScratchPoolBytes) memory.pool.resize(kScratchPoolBytes);
  rapidjson::MemoryPoolAllocator<> pool(memory.pool.data(), memory.pool.size());
  rapidjson::Document document(&pool, kParseStackBytes);
  if (!parse_in_place(text, document))
    return make_error(ErrorKind::kInvalidInput, fmt::format("{}: not valid JSON", source));
  JsonView root(&document, &cut);
  std::vector<ProcessRecord> records;
  if (root.is_array()) {
    records.reserve(root.size());
    for (size_t i = 0; i < root.size(); ++i) {
      auto record = process_record(root.at(i), root.size() == 1 ? source : fmt::format("{}[{}]", source, i),
                                   memory.sharing);
      if (!record) return std::unexpected(record.error());
      records.push_back(std::move(*record));
    }
    return records;
  }
  auto record = process_record(root, source, memory.sharing);
  if (!record) return std::unexpected(record.error());
  records.push_back(std::move(*record));
  return records;
}

Expected<std::vector<ProcessRecord>> records_from_json(const nlohmann::json& document,
                                                       const std::string& source) {
  std::string text = document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  size_t cut = 0;
  return records_from_text(text, source, cut);
}

}  // namespace hangpy::triage
