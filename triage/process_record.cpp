#include "triage/process_record.h"

#include <charconv>
#include <map>

#include <fmt/format.h>

namespace hangpy::triage {
namespace {

// A document from elsewhere may list any number of pids: a pipe's holders are a few processes.
constexpr size_t kMaxOtherEndPids = 64;
constexpr size_t kMaxPipeEnds = 1024;  // as many as a snapshot's note keeps

// Reads of documents that came from other machines: any field may be missing or of another type,
// and neither may stop the triage of the rest.
std::string text_of(const nlohmann::json& object, const char* name) {
  auto found = object.find(name);
  return found != object.end() && found->is_string() ? found->get<std::string>() : std::string();
}

std::optional<int64_t> integer_of(const nlohmann::json& object, const char* name) {
  auto found = object.find(name);
  if (found == object.end() || !found->is_number_integer()) return std::nullopt;
  return found->get<int64_t>();
}

Frame python_frame(const nlohmann::json& frame) {
  Frame result;
  result.kind = Frame::Kind::kPython;
  result.function = text_of(frame, "qualname");
  if (result.function.empty()) result.function = text_of(frame, "function");
  result.file = text_of(frame, "file");
  if (auto line = integer_of(frame, "line")) result.line = static_cast<int>(*line);
  if (auto repeated = frame.find("repeated"); repeated != frame.end() && repeated->is_number_unsigned())
    result.repeated = repeated->get<uint64_t>();
  return result;
}

Frame native_frame(const nlohmann::json& frame) {
  Frame result;
  result.kind = Frame::Kind::kNative;
  result.function = text_of(frame, "demangled");
  if (result.function.empty()) result.function = text_of(frame, "symbol");
  result.file = text_of(frame, "module");
  // A frame without a symbol is told apart by where it is in its module.
  if (result.function.empty()) {
    auto offset = integer_of(frame, "module_offset");
    result.function = offset ? fmt::format("??+0x{:x}", *offset) : "??";
  }
  return result;
}

std::optional<std::vector<Frame>> native_frames_of(const nlohmann::json& thread) {
  auto stack = thread.find("native_stack");
  if (stack == thread.end() || !stack->is_object()) return std::nullopt;
  auto frames = stack->find("frames");
  if (frames == stack->end() || !frames->is_array() || frames->empty()) return std::nullopt;
  std::vector<Frame> result;
  for (const auto& frame : *frames) {
    if (!frame.is_object()) continue;
    result.push_back(text_of(frame, "kind") == "python" ? python_frame(frame) : native_frame(frame));
  }
  return result;
}

// "0x7f12..." as a number; nullopt for anything else.
std::optional<uint64_t> address_of(const nlohmann::json& value) {
  if (!value.is_string()) return std::nullopt;
  const std::string& text = value.get_ref<const std::string&>();
  if (!text.starts_with("0x")) return std::nullopt;
  uint64_t result = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data() + 2, end, result, 16);
  if (error != std::errc() || stop != end || text.size() == 2) return std::nullopt;
  return result;
}

ThreadRecord thread_record(const nlohmann::json& thread, std::optional<int64_t> pid) {
  ThreadRecord record;
  record.native_thread_id = integer_of(thread, "native_thread_id");
  record.thread_id = integer_of(thread, "thread_id");
  if (auto name = thread.find("name"); name != thread.end() && name->is_string())
    record.name = name->get<std::string>();
  if (auto frames = thread.find("frames"); frames != thread.end() && frames->is_array()) {
    bool any_locals = false;
    std::vector<std::vector<std::pair<std::string, std::string>>> locals;
    for (const auto& frame : *frames) {
      if (!frame.is_object()) continue;
      record.python_frames.push_back(python_frame(frame));
      locals.emplace_back();
      auto variables = frame.find("locals");
      if (variables == frame.end() || !variables->is_array()) continue;
      any_locals = true;
      for (const auto& variable : *variables) {
        if (!variable.is_object()) continue;
        auto name = variable.find("name");
        auto repr = variable.find("repr");
        if (name != variable.end() && name->is_string() && repr != variable.end() && repr->is_string())
          locals.back().emplace_back(name->get<std::string>(), repr->get<std::string>());
      }
    }
    if (any_locals) record.python_locals = std::move(locals);
  }
  record.native_frames = native_frames_of(thread);
  if (std::string error = text_of(thread, "error"); !error.empty()) record.error = std::move(error);
  auto state = thread.find("state");
  if (state != thread.end() && state->is_object()) {
    auto main = state->find("main_thread");
    record.main_thread = main != state->end() && main->is_boolean() && main->get<bool>();
    auto idle = state->find("idle");
    record.idle = idle != state->end() && idle->is_boolean() && idle->get<bool>();
    if (auto held = state->find("held_locks"); held != state->end() && held->is_array()) {
      for (const auto& lock : *held)
        if (auto address = address_of(lock)) record.held_locks.push_back(*address);
    }
  } else {
    record.main_thread = pid && record.native_thread_id == pid;
  }
  auto blocked = thread.find("blocked_on");
  if (blocked != thread.end() && blocked->is_object()) {
    std::string kind = text_of(*blocked, "kind");
    std::string description = text_of(*blocked, "description");
    if (!kind.empty()) record.blocked_kind = kind;
    if (!description.empty()) record.blocked_description = description;
    if (auto object = blocked->find("object"); object != blocked->end()) record.blocked_object = address_of(*object);
    auto gone = blocked->find("holder_gone");
    record.holder_gone = gone != blocked->end() && gone->is_boolean() && gone->get<bool>();
    record.owner_ident = integer_of(*blocked, "owner_thread_id");
    if (auto child = blocked->find("child_pid"); child != blocked->end() && child->is_number_integer())
      record.child_pid = child->get<int64_t>();
    record.blocked_fd = integer_of(*blocked, "fd");
    if (auto fds = blocked->find("child_pipe_fds"); fds != blocked->end() && fds->is_array()) {
      for (const auto& fd : *fds)
        if (fd.is_number_integer() && record.child_pipe_fds.size() < 2) record.child_pipe_fds.push_back(fd.get<int64_t>());
    }
    if (auto others = blocked->find("other_end_pids"); others != blocked->end() && others->is_array()) {
      for (const auto& other : *others)
        if (other.is_number_integer() && record.other_end_pids.size() < kMaxOtherEndPids)
          record.other_end_pids.push_back(other.get<int64_t>());
    }
  }
  return record;
}

// The pending tasks of the document's "asyncio" object: running ones are on their thread's
// stack already, done ones wait for nothing. A task whose coroutine stack could not be read adds
// nothing to compare.
void add_asyncio_tasks(const nlohmann::json& document, ProcessRecord& record) {
  auto asyncio = document.find("asyncio");
  if (asyncio == document.end() || !asyncio->is_object()) return;
  auto tasks = asyncio->find("tasks");
  if (tasks == asyncio->end() || !tasks->is_array()) return;
  for (const auto& task : *tasks) {
    if (!task.is_object() || text_of(task, "state") != "pending") continue;
    auto stack = task.find("coroutine_stack");
    if (stack == task.end() || !stack->is_array() || stack->empty()) continue;
    ThreadRecord record_of_task;
    record_of_task.asyncio_task = true;
    std::string name = text_of(task, "name");
    if (!name.empty()) record_of_task.name = name;
    for (auto frame = stack->rbegin(); frame != stack->rend(); ++frame)  // innermost first there
      if (frame->is_object()) record_of_task.python_frames.push_back(python_frame(*frame));
    if (record_of_task.python_frames.empty()) continue;
    auto awaits = task.find("awaits");
    if (awaits != task.end() && awaits->is_object()) {
      std::string kind = text_of(*awaits, "kind");
      std::string detail = text_of(*awaits, "detail");
      if (!kind.empty()) record_of_task.blocked_kind = kind;
      if (!detail.empty()) record_of_task.blocked_description = detail;
    }
    record.threads.push_back(std::move(record_of_task));
  }
  // Tasks awaiting each other in a ring: a deadlock of the process, like threads' lock cycles.
  auto cycles = asyncio->find("cycles");
  if (cycles == asyncio->end() || !cycles->is_array()) return;
  std::map<std::string, std::string> names;  // address -> name
  for (const auto& task : *tasks)
    if (task.is_object()) names[text_of(task, "address")] = text_of(task, "name");
  for (const auto& cycle : *cycles) {
    if (!cycle.is_array() || cycle.empty()) continue;
    std::vector<std::string> members;
    for (const auto& address : cycle) {
      std::string text = address.is_string() ? address.get<std::string>() : std::string("?");
      auto found = names.find(text);
      members.push_back(found != names.end() && !found->second.empty() ? found->second : text);
    }
    record.deadlocks.push_back(
        fmt::format("asyncio tasks {} await each other", fmt::join(members, ", ")));
  }
}

// The document's "look": when it was taken, each thread's CPU time and I/O bytes by then.
void add_look(const nlohmann::json& document, ProcessRecord& record) {
  auto look = document.find("look");
  if (look == document.end() || !look->is_object()) return;
  if (auto at = look->find("unix_time"); at != look->end() && at->is_number()) record.taken_at = at->get<double>();
  auto threads = look->find("threads");
  if (threads == look->end() || !threads->is_array()) return;
  for (const auto& entry : *threads) {
    if (!entry.is_object()) continue;
    const std::optional<int64_t> id = integer_of(entry, "native_thread_id");
    for (ThreadRecord& thread : record.threads) {
      if (thread.asyncio_task || !id || thread.native_thread_id != id) continue;
      if (auto cpu = entry.find("cpu_seconds"); cpu != entry.end() && cpu->is_number())
        thread.cpu_seconds = cpu->get<double>();
      if (auto io = entry.find("io_bytes"); io != entry.end() && io->is_number_unsigned())
        thread.io_bytes = io->get<uint64_t>();
      if (auto delay = entry.find("run_delay_seconds"); delay != entry.end() && delay->is_number())
        thread.run_delay_seconds = delay->get<double>();
      if (auto state = entry.find("state"); state != entry.end() && state->is_string() && state->get<std::string>().size() == 1)
        thread.run_state = state->get<std::string>()[0];
    }
  }
}

Expected<ProcessRecord> process_record(const nlohmann::json& document, const std::string& source) {
  if (!document.is_object())
    return make_error(ErrorKind::kInvalidInput, fmt::format("{}: not a coreanalyze --json document", source));
  auto threads = document.find("threads");
  if (threads == document.end() || !threads->is_array()) {
    return make_error(ErrorKind::kInvalidInput,
                      fmt::format("{}: not a coreanalyze --json document (no \"threads\")", source));
  }
  ProcessRecord record;
  record.source = source;
  static const nlohmann::json kNoProcess = nlohmann::json::object();
  auto process = document.find("process");
  const nlohmann::json& process_json =
      process != document.end() && process->is_object() ? *process : kNoProcess;
  record.labels = labels_from_json(process_json);
  record.command = text_of(process_json, "command");
  if (auto ends = process_json.find("pipe_ends"); ends != process_json.end() && ends->is_array()) {
    for (const auto& end : *ends) {
      if (!end.is_object() || record.pipe_ends.size() >= kMaxPipeEnds) continue;
      auto fd = integer_of(end, "fd");
      auto inode = end.find("inode");
      const std::string which = text_of(end, "end");
      if (!fd || inode == end.end() || !inode->is_number_unsigned() || (which != "read" && which != "write")) continue;
      record.pipe_ends.push_back({*fd, inode->get<uint64_t>(), which == "read"});
    }
  }
  if (auto ends = process_json.find("socket_ends"); ends != process_json.end() && ends->is_array()) {
    for (const auto& end : *ends) {
      if (!end.is_object() || record.socket_ends.size() >= kMaxPipeEnds) continue;
      auto fd = integer_of(end, "fd");
      std::string local = text_of(end, "local"), remote = text_of(end, "remote");
      if (!fd || local.empty() || remote.empty()) continue;
      record.socket_ends.push_back({*fd, std::move(local), std::move(remote)});
    }
  }
  for (const auto& thread : *threads)
    if (thread.is_object()) record.threads.push_back(thread_record(thread, record.labels.pid));
  // --native-all: the threads that run no Python, by their native stacks alone.
  auto others = document.find("threads_without_python");
  if (others != document.end() && others->is_array()) {
    for (const auto& thread : *others) {
      if (!thread.is_object() || thread.find("native_stack") == thread.end()) continue;
      ThreadRecord native_only = thread_record(thread, record.labels.pid);
      if (native_only.native_frames) record.threads.push_back(std::move(native_only));
    }
  }
  add_look(document, record);
  add_asyncio_tasks(document, record);
  auto deadlocks = document.find("deadlocks");
  if (deadlocks != document.end() && deadlocks->is_array()) {
    for (const auto& cycle : *deadlocks)
      if (cycle.is_object()) record.deadlocks.push_back(text_of(cycle, "description"));
  }
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

Expected<std::vector<ProcessRecord>> records_from_json(const nlohmann::json& document,
                                                       const std::string& source) {
  std::vector<ProcessRecord> records;
  if (document.is_array()) {
    for (size_t i = 0; i < document.size(); ++i) {
      auto record = process_record(document[i], document.size() == 1 ? source : fmt::format("{}[{}]", source, i));
      if (!record) return std::unexpected(record.error());
      records.push_back(std::move(*record));
    }
    return records;
  }
  auto record = process_record(document, source);
  if (!record) return std::unexpected(record.error());
  records.push_back(std::move(*record));
  return records;
}

}  // namespace hangpy::triage
