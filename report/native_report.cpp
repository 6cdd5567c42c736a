#include "report/native_report.h"

#include "report/diagnosis_report.h"
#include "report/repeated_frames.h"

#include <fmt/format.h>

#include <filesystem>

#include "base/printable.h"
#include "symbols/demangle.h"

namespace hangpy::report {
namespace {

std::string base_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

std::string native_line(const native::NativeFrame& frame) {
  std::string where;
  if (frame.symbol.empty()) {
    where = frame.module.empty() ? "??" : fmt::format("?? ({}+0x{:x})", base_name(frame.module),
                                                      frame.module_offset);
  } else {
    where = symbols::demangle(frame.symbol);
    if (frame.offset != 0) where += fmt::format("+0x{:x}", frame.offset);
    if (frame.inlined) where += " (inlined)";
    if (!frame.module.empty()) where += fmt::format(" ({})", base_name(frame.module));
  }
  if (frame.source_line > 0) where += fmt::format(" at {}:{}", frame.source_file, frame.source_line);
  // A core's symbol and file names are its own: escaped for the terminal.
  std::string text = fmt::format("0x{:016x} in {}", frame.pc, for_terminal(where));
  // Frames found from a frame pointer may be wrong where CFI would not be: say so.
  if (frame.how == native::FrameHow::kFramePointer) text += " [frame pointer]";
  return text;
}

std::string python_line(const cpython::PythonFrame& frame, SourceReader* sources,
                        const TextStyle& style) {
  std::string line = frame.line ? std::to_string(*frame.line) : "?";
  std::string text = fmt::format("(Python) File \"{}\", line {}, in {}", for_terminal(frame.file), line,
                                 for_terminal(style.qualified_names ? frame.qualname : frame.function));
  if (sources && frame.line) {
    if (auto source = sources->line(frame.file, *frame.line); source && !source->empty())
      text += fmt::format("\n        {}", *source);
  }
  return text;
}

nlohmann::json native_json(const native::NativeFrame& frame) {
  return {
      {"pc", fmt::format("0x{:x}", frame.pc)},
      {"sp", fmt::format("0x{:x}", frame.sp)},
      {"how", native::frame_how_name(frame.how)},
      {"module", frame.module.empty() ? nlohmann::json(nullptr) : nlohmann::json(frame.module)},
      {"module_offset", frame.module_offset},
      {"symbol", frame.symbol.empty() ? nlohmann::json(nullptr) : nlohmann::json(frame.symbol)},
      {"demangled",
       frame.symbol.empty() ? nlohmann::json(nullptr) : nlohmann::json(symbols::demangle(frame.symbol))},
      {"offset", frame.offset},
      {"inlined", frame.inlined},
      {"source", frame.source_line > 0 ? nlohmann::json({{"file", frame.source_file}, {"line", frame.source_line}})
                                       : nlohmann::json(nullptr)},
  };
}

// A Python frame that repeats the one before it in a recursion: the same place, run by the same
// eval-loop code (or both without one). Native frames never fold: a C recursion interleaves.
bool repeats_merged(const native::MergedFrame& frame, const native::MergedFrame& previous) {
  if (!frame.python || !previous.python || !repeats_previous(*frame.python, *previous.python)) return false;
  if (frame.native.has_value() != previous.native.has_value()) return false;
  return !frame.native || frame.native->pc == previous.native->pc;
}

}  // namespace

std::string format_merged_stack(const native::MergedStack& stack, SourceReader* sources,
                                const TextStyle& style) {
  if (stack.error) return fmt::format("  <no native stack: {}>\n", for_terminal(*stack.error));
  std::string text = "Stack (most recent call first):\n";
  size_t run = 0;  // frames of the current recursion so far, this one included
  for (size_t i = 0; i < stack.frames.size(); ++i) {
    const native::MergedFrame& frame = stack.frames[i];
    run = i > 0 && style.fold_recursion && repeats_merged(frame, stack.frames[i - 1]) ? run + 1 : 1;
    if (run > kRepeatsShown) {
      const bool last = i + 1 == stack.frames.size() || !repeats_merged(stack.frames[i + 1], frame);
      if (last) text += repeated_frames_line(run - kRepeatsShown);
      continue;
    }
    if (style.before_merged_frame) text += style.before_merged_frame(stack.lwp, i);
    const std::string body = frame.python ? python_line(*frame.python, sources, style)
                                          : native_line(*frame.native);
    text += fmt::format("  #{:<3} {}\n", i, body);
    if (frame.python && style.after_frame) text += style.after_frame(*frame.python);
  }
  if (stack.end_reason) text += fmt::format("  <native frames end here: {}>\n", *stack.end_reason);
  return text;
}

std::string format_process_native(const cpython::ProcessStacks& stacks, const native::MergedStacks& merged,
                                  SourceReader* sources, const TextStyle& style, bool all_threads,
                                  const diagnosis::ProcessDiagnosis* diagnosis) {
  std::string text = diagnosis ? format_process_diagnosis(*diagnosis) : std::string();
  for (size_t i = 0; i < stacks.threads.size(); ++i) {
    const cpython::PythonThread& thread = stacks.threads[i];
    text += format_thread_header(thread, style) + "\n";
    if (diagnosis && i < diagnosis->threads.size())
      text += format_thread_diagnosis(diagnosis->threads[i], stacks);
    auto it = thread.native_thread_id ? merged.find(static_cast<int64_t>(*thread.native_thread_id))
                                      : merged.end();
    if (it != merged.end() && it->second.error) {
      // Its Python frames are known all the same.
      text += format_merged_stack(it->second, sources, style);
      text += format_traceback(thread, sources, style);
    } else if (it != merged.end()) {
      text += format_merged_stack(it->second, sources, style);
      if (thread.error)
        text += fmt::format("  <Python frames end here: {}>\n", thread.error->describe());
    } else {
      text += "  <no native stack: the thread's LWP is unknown>\n";
      text += format_traceback(thread, sources, style);
    }
    text += "\n";
  }
  if (!all_threads || !stacks.threads_without_python) return text + format_threads_without_python(stacks, diagnosis);
  for (int64_t lwp : *stacks.threads_without_python) {
    auto role = diagnosis ? diagnosis->native_roles.find(lwp) : std::map<int64_t, std::string>::const_iterator();
    if (diagnosis && role != diagnosis->native_roles.end())
      text += fmt::format("Thread (LWP {}) runs no Python: {}\n", lwp, role->second);
    else
      text += fmt::format("Thread (LWP {}) runs no Python\n", lwp);
    auto it = merged.find(lwp);
    text += it != merged.end() ? format_merged_stack(it->second, sources, style)
                               : std::string("  <no native stack>\n");
    text += "\n";
  }
  return text;
}

nlohmann::json merged_stack_json(const native::MergedStack& stack) {
  nlohmann::json frames = nlohmann::json::array();
  size_t run = 0;
  for (auto it = stack.frames.rbegin(); it != stack.frames.rend(); ++it) {
    // A recursion folded as in the Python frames: the third frame of a run counts the rest.
    run = it != stack.frames.rbegin() && repeats_merged(*it, *std::prev(it)) ? run + 1 : 1;
    if (run > kRepeatsShown) {
      nlohmann::json& kept = frames.back();
      kept["repeated"] = kept.value("repeated", 0) + 1;
      continue;
    }
    nlohmann::json entry;
    if (it->python) {
      entry = {{"kind", "python"},
               {"file", it->python->file},
               {"line", it->python->line ? nlohmann::json(*it->python->line) : nlohmann::json(nullptr)},
               {"function", it->python->function},
               {"qualname", it->python->qualname},
               {"address", fmt::format("0x{:x}", it->python->address)},
               {"eval_frame", it->native ? native_json(*it->native) : nlohmann::json(nullptr)}};
    } else {
      entry = native_json(*it->native);
      entry["kind"] = "native";
    }
    frames.push_back(std::move(entry));
  }
  auto optional_json = [](const auto& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  return {{"frames", std::move(frames)},
          {"end_reason", optional_json(stack.end_reason)},
          {"error", optional_json(stack.error)}};
}

void add_native_stacks(nlohmann::json& document, const cpython::ProcessStacks& stacks,
                       const native::MergedStacks& merged) {
  nlohmann::json& threads = document["threads"];
  for (size_t i = 0; i < stacks.threads.size() && i < threads.size(); ++i) {
    const auto& lwp = stacks.threads[i].native_thread_id;
    auto it = lwp ? merged.find(static_cast<int64_t>(*lwp)) : merged.end();
    if (it != merged.end()) threads[i]["native_stack"] = merged_stack_json(it->second);
  }
  nlohmann::json& others = document["threads_without_python"];
  if (!others.is_array()) return;
  for (nlohmann::json& thread : others) {
    auto it = merged.find(thread["native_thread_id"].get<int64_t>());
    if (it != merged.end()) thread["native_stack"] = merged_stack_json(it->second);
  }
}

}  // namespace hangpy::report
